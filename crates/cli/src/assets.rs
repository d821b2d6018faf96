//! `tcpnc assets DIR` (hidden): writes the man pages (clap_mangen) and the bash, zsh and fish
//! completions (clap_complete) generated from the command-line definition itself, for the
//! Debian package (`scripts/build-deb`) and for installs from source.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Command;
use clap_complete::Shell;

/// Arguments of `tcpnc assets`.
#[derive(Debug, Clone, clap::Args)]
pub struct AssetsArgs {
    /// Output directory: man/ and completions/ are created in it.
    #[arg(value_name = "DIR")]
    pub out: PathBuf,
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// `tcpnc.1` and one `tcpnc-SUB.1` per visible subcommand.
fn man_pages(cmd: &Command, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    let mut page = |name: String, cmd: Command| -> Result<()> {
        let mut buf = Vec::new();
        // A one-shot command: the page names live until exit.
        let title: &'static str = name.clone().leak();
        clap_mangen::Man::new(cmd.name(title)).render(&mut buf)?;
        let path = dir.join(format!("{name}.1"));
        write(&path, &buf)?;
        written.push(path);
        Ok(())
    };
    page("tcpnc".into(), cmd.clone())?;
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        page(format!("tcpnc-{}", sub.get_name()), sub.clone())?;
    }
    Ok(written)
}

/// Runs `tcpnc assets`.
pub fn run(args: &AssetsArgs, mut cmd: Command) -> Result<()> {
    cmd.build();
    let pages = man_pages(&cmd, &args.out.join("man"))?;
    let completions = args.out.join("completions");
    std::fs::create_dir_all(&completions)?;
    for (shell, file) in [
        (Shell::Bash, "tcpnc.bash"),
        (Shell::Zsh, "_tcpnc"),
        (Shell::Fish, "tcpnc.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cmd.clone(), "tcpnc", &mut buf);
        write(&completions.join(file), &buf)?;
    }
    println!(
        "{} man pages and 3 completions in {}",
        pages.len(),
        args.out.display()
    );
    Ok(())
}
