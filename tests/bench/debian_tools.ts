/**
 * Load generators taken from Debian's packages without installing them: the
 * packages are fetched with `apt-get download` and unpacked with `dpkg -x`
 * into tests/bench/.cache, so `deno task bench` runs on a fresh machine with
 * nothing installed beyond Deno and PostgreSQL.
 */
const CACHE = new URL("./.cache/", import.meta.url);

async function run(cmd: string, args: string[], cwd: URL): Promise<void> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    throw new Error(`${cmd} ${args.join(" ")} failed: ${text}`);
  }
}

/** A program unpacked from Debian's packages: its path, and the directories of the libraries it needs. */
export interface DebianTool {
  bin: string;
  /** For LD_LIBRARY_PATH. */
  libs: string;
}

/**
 * `bin` (a path inside the packages, such as `usr/bin/wrk`) from `packages`
 * (the program's and those of its libraries that a machine may lack),
 * unpacked once into the cache directory `name`.
 */
export async function debianTool(name: string, packages: string[], bin: string, libs: string[]): Promise<DebianTool> {
  const dir = new URL(`${name}/`, CACHE);
  const root = new URL("root/", dir);
  const path = new URL(bin, root);
  if (!await Deno.stat(path).then(() => true, () => false)) {
    await Deno.mkdir(dir, { recursive: true });
    await run("apt-get", ["download", ...packages], dir).catch(async () => {
      await run("apt-get", ["update", "-qq"], dir);
      await run("apt-get", ["download", ...packages], dir);
    });
    for (const entry of Deno.readDirSync(dir)) {
      if (entry.name.endsWith(".deb")) await run("dpkg", ["-x", entry.name, "root"], dir);
    }
  }
  return { bin: path.pathname, libs: libs.map((l) => new URL(l, root).pathname).join(":") };
}
