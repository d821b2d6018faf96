#!/usr/bin/env python3
"""Builds the .deb of [package.metadata.deb] (crates/cli/Cargo.toml) with dpkg-deb, laying out
the files as cargo-deb does: assets copied with their modes (the binary stripped, man pages
gzipped), usr/share/doc/<name>/copyright, DEBIAN/control with $auto resolved by
dpkg-shlibdeps. Called by scripts/build-deb; prints the path of the package."""
import argparse, glob, gzip, os, shutil, subprocess, sys, tempfile, textwrap, tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATE = os.path.join(ROOT, "crates", "cli")


def workspace_version():
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def install(src, dest, mode, stage, binary):
    if src.startswith("target/release/"):
        files = [binary]
    else:
        files = sorted(glob.glob(os.path.join(CRATE, src)))
        if not files:
            sys.exit(f"asset {src} matches no file")
    for path in files:
        target = dest + os.path.basename(path) if dest.endswith("/") else dest
        target = os.path.join(stage, target)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if target.endswith(".1") and "/share/man/" in target:
            target += ".gz"
            with open(path, "rb") as i, open(target, "wb") as o:
                o.write(gzip.compress(i.read(), 9, mtime=0))
        elif path == binary:
            subprocess.run(["strip", "--strip-unneeded", "-o", target, path], check=True)
        else:
            shutil.copyfile(path, target)
        os.chmod(target, int(mode, 8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(os.path.join(CRATE, "Cargo.toml"), "rb") as f:
        cargo = tomllib.load(f)
    meta, pkg = cargo["package"]["metadata"]["deb"], cargo["package"]
    name, version = meta["name"], workspace_version() + "-1"
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    stage = tempfile.mkdtemp(prefix="tcpnc-deb-")
    os.chmod(stage, 0o755)
    for src, dest, mode in meta["assets"]:
        install(src, dest, mode, stage, args.binary)
    doc = os.path.join(stage, "usr/share/doc", name)
    os.makedirs(doc, exist_ok=True)
    with open(os.path.join(doc, "copyright"), "w") as f:
        f.write(f"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
                f"Upstream-Name: {name}\n\nFiles: *\nCopyright: {meta['copyright']}\n"
                f"License: MIT OR Apache-2.0\n")
    depends = meta["depends"]
    if "$auto" in depends:
        os.makedirs(os.path.join(stage, "debian"), exist_ok=True)
        with open(os.path.join(stage, "debian", "control"), "w") as f:
            f.write(f"Source: {name}\n\nPackage: {name}\nArchitecture: any\n")
        shl = subprocess.run(["dpkg-shlibdeps", "-O", os.path.join(stage, "usr/bin", name)],
                             cwd=stage, capture_output=True, text=True, check=True).stdout
        auto = shl.split("shlibs:Depends=", 1)[1].strip() if "shlibs:Depends=" in shl else ""
        shutil.rmtree(os.path.join(stage, "debian"))
        depends = ", ".join(d.strip() for d in depends.replace("$auto", auto).split(",") if d.strip())
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(stage) for f in fs)
    description = pkg["description"] + "\n" + "\n".join(
        " " + line for line in textwrap.wrap(meta["extended-description"], 79))
    os.makedirs(os.path.join(stage, "DEBIAN"), mode=0o755)
    with open(os.path.join(stage, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n"
                f"Section: {meta['section']}\nPriority: {meta['priority']}\n"
                f"Maintainer: {meta['maintainer']}\nInstalled-Size: {(size + 1023) // 1024}\n"
                f"Depends: {depends}\nDescription: {description}\n")
    os.makedirs(args.out, exist_ok=True)
    deb = os.path.join(args.out, f"{name}_{version}_{arch}.deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", stage, deb], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(stage)
    print(deb)


if __name__ == "__main__":
    main()
