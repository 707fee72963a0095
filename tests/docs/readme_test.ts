/**
 * The project's documents stay true to the tree they describe: a renamed file
 * or function, or a document that speaks of how the work was organised rather
 * than of the project, fails here instead of misleading a reader.
 *
 * Documents: README.md, every Markdown file under docs/, and every README.md
 * under src/, tests/ and scripts/ (tests/bench/README.md among them). Their
 * whole text is read, fenced code included. A passage is a paragraph, a list
 * item, a table row or a fenced block.
 *
 * 1. Paths. A token that starts with `src/`, `tests/`, `scripts/`, `vendor/`,
 *    `docs/`, `generated/` or `.ci/` (not right after a letter, digit, `.`,
 *    `/`, `@` or `-`, so `../other/src/a.ts` and URLs are not taken) must
 *    exist, trailing punctuation and a `#anchor` aside. A token with a
 *    placeholder (`<name>`, `*`, `NNNN`, `...`) names a family of files: the
 *    folder before the placeholder must exist. A path .gitignore lists (what
 *    a run writes, such as tests/e2e/out/) need not exist.
 * 2. A file and its functions. A file (a path as in 1 ending in .ts or .js,
 *    or a code span holding a bare name such as `signer.ts`) followed
 *    directly by code spans of identifiers (`name`, `name()`, `name(args)`,
 *    separated by spaces, commas, "and" or "or"), as in "`src/events/repo.ts`
 *    `appendEvents`", and a code span of an identifier followed by "in" or
 *    "of" and such a file, as in "`recordWithRetry` in
 *    `src/deliveries/dispatcher.ts`": each identifier must be defined in that
 *    file. Defined: declared (function, class, const, let, var, type,
 *    interface, enum), a method, property or export-list entry at the start
 *    of a line, an `export { ... }` entry, or assigned as a property
 *    (`x.name =`). A bare name must be a file under src/, tests/, scripts/ or
 *    vendor/; it is the one in the folder of the last path cited before it in
 *    the passage, else any file of that name (one of them must define it).
 * 3. Module members. A code span `name.member` or `name.member(...)`, where
 *    src/ imports a module whole under that name (`import * as repo from
 *    "./repo.ts"`), cites a member of that module, as the code would call it
 *    (`repo.claim`): the module must export `member`. Among the modules
 *    imported under that name, the one in the folder of the last path cited
 *    before the span in its passage counts; with no such path, any of them.
 *    Other dotted names (`outbox.transaction`, `crypto.createHmac(...)`) are
 *    objects or other libraries' modules, not checked.
 * 4. No work periods or tracker numbers: the word session or issue followed
 *    by a number (with or without `#`) appears nowhere in README.md, docs/,
 *    src/, tests/ or scripts/ (tests/bench/.cache/ and vendor/ left out): a
 *    document says what is true of the project, not when or under which
 *    ticket it became so.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const ROOTS = ["src", "tests", "scripts", "vendor", "docs", "generated", ".ci"];
/** Folders whose files a bare file name may name. */
const CODE_ROOTS = ["src", "tests", "scripts", "vendor"];
/** Folders never read: what runs write (tests/bench/.cache/, tests/e2e/out/), not the project's text. */
const SKIPPED = new Set(["node_modules", ".cache", "out"]);

const PATH = new RegExp(`(?<![\\w./@-])(?:${ROOTS.map(escape).join("|")})/[^\\s\`'"()\\[\\],;|]*`, "g");
const PLACEHOLDER = /<|\*|NNNN|\.\.\./;
const IDENT = String.raw`[A-Za-z_$][\w$]*`;
/** A code span holding one identifier, maybe called: `name`, `name()`, `name(a, b)`. */
const IDENT_SPAN = String.raw`\`(${IDENT})(?:\([^\`]*\))?\``;
/** A file a passage cites: a code span with a .ts/.js name or path, or a bare path. */
const FILE_REF = new RegExp(
  String.raw`\`([\w./-]+\.(?:ts|js))\`|(?<![\w./@\`-])((?:src|tests|scripts|vendor)/[\w./-]+\.(?:ts|js))\b`,
  "g",
);
/** Code spans that follow a file: `a`, `b()` and `c`. */
const FOLLOWING = new RegExp(String.raw`^(?:\s*(?:,|\band\b|\bor\b)?\s*)${IDENT_SPAN}`);
/** `name` in/of file. */
const IN_FILE = new RegExp(
  String
    .raw`${IDENT_SPAN}\s+(?:in|of)\s+(?:\`([\w./-]+\.(?:ts|js))\`|((?:src|tests|scripts|vendor)/[\w./-]+\.(?:ts|js))\b)`,
  "g",
);
const MEMBER_SPAN = new RegExp(String.raw`\`(${IDENT})\.(${IDENT})(?:\([^\`]*\))?\``, "g");
/** `repo.ts`, `main.js`: file names, not members. */
const EXTENSIONS = new Set(["ts", "js", "json", "md", "sql"]);
const NAMESPACE_IMPORT = /import \* as ([\w$]+) from "(\.[^"]+)"/g;
const WORK_PERIOD = /\b(?:[Ss]ession|[Ii]ssue)s? #?\d/;

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(new URL(path, ROOT));
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory && !SKIPPED.has(entry.name)) yield* walk(path);
    else if (entry.isFile) yield path;
  }
}

async function documents(): Promise<string[]> {
  const docs = ["README.md"];
  for await (const path of walk("docs")) if (path.endsWith(".md")) docs.push(path);
  for (const dir of ["src", "tests", "scripts"]) {
    for await (const path of walk(dir)) if (path.endsWith("/README.md")) docs.push(path);
  }
  return docs.sort();
}

/** Every file under the code roots, by its name. */
async function filesByName(): Promise<Map<string, string[]>> {
  const byName = new Map<string, string[]>();
  for (const dir of CODE_ROOTS) {
    for await (const path of walk(dir)) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      byName.set(name, [...(byName.get(name) ?? []), path]);
    }
  }
  return byName;
}

/** The plain path entries of .gitignore (globs left out), as prefixes. */
async function ignoredPrefixes(): Promise<string[]> {
  const lines = (await Deno.readTextFile(new URL(".gitignore", ROOT))).split("\n");
  return lines.map((l) => l.trim().replace(/^\//, "")).filter((l) => l && !l.startsWith("#") && !/[*?[]/.test(l));
}

/** Paragraphs, list items, table rows and fenced blocks, with the line each starts on. */
function passages(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let current: { line: number; lines: string[] } | undefined;
  let fenced = false;
  const flush = () => {
    if (current) out.push({ line: current.line, text: current.lines.join("\n") });
    current = undefined;
  };
  for (const [i, line] of text.split("\n").entries()) {
    const fence = /^\s*```/.test(line);
    if (fenced) {
      current!.lines.push(line);
      if (fence) {
        fenced = false;
        flush();
      }
      continue;
    }
    const starts = fence || line.trim() === "" || /^\s*(?:[-*+]|\d+\.)\s/.test(line) || /^\s*[|#]/.test(line);
    if (starts) flush();
    if (line.trim() === "") continue;
    if (!current) current = { line: i + 1, lines: [] };
    current.lines.push(line);
    if (fence) fenced = true;
    else if (/^\s*[|#]/.test(line)) flush();
  }
  flush();
  return out;
}

/** Whether `text` (a module's source) defines `name`. */
function defines(text: string, name: string): boolean {
  const n = escape(name);
  return [
    new RegExp(String.raw`\b(?:function\*?|class|const|let|var|type|interface|enum|namespace)\s+${n}\b`),
    new RegExp(
      String
        .raw`^\s*(?:(?:export|default|async|static|public|private|protected|readonly|get|set|override|declare)\s+)*#?${n}\s*[(<:=?,]`,
      "m",
    ),
    new RegExp(String.raw`\.${n}\s*=(?!=)`),
    new RegExp(String.raw`export\s*(?:type\s*)?\{[^}]*\b${n}\b`),
  ].some((re) => re.test(text));
}

const sources = new Map<string, string>();
async function source(path: string): Promise<string> {
  let text = sources.get(path);
  if (text === undefined) sources.set(path, text = await Deno.readTextFile(new URL(path, ROOT)));
  return text;
}

/** Whether `text` (a module's source) exports `name`. */
function exports(text: string, name: string): boolean {
  const n = escape(name);
  return new RegExp(
    String.raw`\bexport\s+(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|type|interface|enum)\s+${n}\b`,
  ).test(text) || new RegExp(String.raw`export\s*(?:type\s*)?\{[^}]*\b${n}\b`).test(text);
}

/** The modules src/ imports whole (`import * as name`), by that name. */
async function namespaceImports(): Promise<Map<string, Set<string>>> {
  const byName = new Map<string, Set<string>>();
  for await (const path of walk("src")) {
    if (!path.endsWith(".ts")) continue;
    for (const m of (await source(path)).matchAll(NAMESPACE_IMPORT)) {
      const file = new URL(m[2]!, new URL(path, ROOT)).pathname.slice(ROOT.pathname.length);
      byName.set(m[1]!, (byName.get(m[1]!) ?? new Set()).add(file));
    }
  }
  return byName;
}

/** The folder of the last path cited in `text` before `index`, if any. */
function contextFolder(text: string, index: number): string | undefined {
  let folder: string | undefined;
  for (const m of text.slice(0, index).matchAll(PATH)) {
    const path = m[0].replace(/[.:]+$/, "");
    folder = /\.\w+$/.test(path) ? path.slice(0, path.lastIndexOf("/")) : path.replace(/\/$/, "");
  }
  return folder;
}

/** The files a cited file stands for: a path itself, or the files of a bare name (context first). */
function resolveFile(
  ref: string,
  folder: string | undefined,
  byName: Map<string, string[]>,
): string[] {
  if (ref.includes("/")) return [ref.replace(/^\.\//, "")];
  const all = byName.get(ref) ?? [];
  const inFolder = all.filter((p) => folder !== undefined && p === `${folder}/${ref}`);
  return inFolder.length > 0 ? inFolder : all;
}

Deno.test("every path the documents cite exists", async () => {
  const ignored = await ignoredPrefixes();
  const missing: string[] = [];
  for (const doc of await documents()) {
    const text = await Deno.readTextFile(new URL(doc, ROOT));
    for (const [i, line] of text.split("\n").entries()) {
      for (const m of line.matchAll(PATH)) {
        let path = m[0].replace(/#.*$/, "").replace(/[.:]+$/, "");
        const placeholder = PLACEHOLDER.exec(path);
        if (placeholder) path = path.slice(0, path.lastIndexOf("/", placeholder.index) + 1);
        if (await exists(path)) continue;
        if (ignored.some((p) => path === p || path.startsWith(p.endsWith("/") ? p : `${p}/`))) continue;
        missing.push(`${doc}:${i + 1}: ${m[0]}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("every function cited beside its file is defined in that file", async () => {
  const byName = await filesByName();
  const wrong: string[] = [];
  const check = async (where: string, ref: string, folder: string | undefined, names: string[]) => {
    const files = resolveFile(ref, folder, byName);
    if (files.length === 0 || !(await exists(files[0]!))) {
      wrong.push(`${where}: ${ref} is no file`);
      return;
    }
    for (const name of names) {
      const found = await Promise.all(files.map(async (f) => defines(await source(f), name)));
      if (!found.includes(true)) wrong.push(`${where}: \`${name}\` is not defined in ${files.join(" or ")}`);
    }
  };
  for (const doc of await documents()) {
    const text = await Deno.readTextFile(new URL(doc, ROOT));
    for (const passage of passages(text)) {
      const where = `${doc}:${passage.line}`;
      for (const m of passage.text.matchAll(FILE_REF)) {
        const names: string[] = [];
        let rest = passage.text.slice(m.index + m[0].length);
        for (let f = FOLLOWING.exec(rest); f; f = FOLLOWING.exec(rest)) {
          names.push(f[1]!);
          rest = rest.slice(f[0].length);
        }
        if (names.length > 0) await check(where, (m[1] ?? m[2])!, contextFolder(passage.text, m.index), names);
      }
      for (const m of passage.text.matchAll(IN_FILE)) {
        await check(where, (m[2] ?? m[3])!, contextFolder(passage.text, m.index), [m[1]!]);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("every module.member the documents cite is exported by that module", async () => {
  const namespaces = await namespaceImports();
  assert.ok(namespaces.has("repo"), "src/ imports its repo modules whole");
  const wrong: string[] = [];
  for (const doc of await documents()) {
    const text = await Deno.readTextFile(new URL(doc, ROOT));
    for (const passage of passages(text)) {
      for (const m of passage.text.matchAll(MEMBER_SPAN)) {
        const [, name, member] = m as unknown as [string, string, string];
        const modules = [...(namespaces.get(name) ?? [])];
        if (modules.length === 0 || EXTENSIONS.has(member)) continue;
        const folder = contextFolder(passage.text, m.index);
        const inFolder = modules.filter((p) => p.slice(0, p.lastIndexOf("/")) === folder);
        const files = inFolder.length > 0 ? inFolder : modules;
        const found = await Promise.all(files.map(async (f) => exports(await source(f), member)));
        if (!found.includes(true)) {
          wrong.push(`${doc}:${passage.line}: \`${name}.${member}\` is not exported by ${files.sort().join(" or ")}`);
        }
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no document speaks of work periods or tracker numbers", async () => {
  const found: string[] = [];
  const files = ["README.md"];
  for (const dir of ["docs", "src", "tests", "scripts"]) for await (const path of walk(dir)) files.push(path);
  for (const path of files) {
    const bytes = await Deno.readFile(new URL(path, ROOT));
    if (bytes.includes(0)) continue;
    for (const [i, line] of new TextDecoder().decode(bytes).split("\n").entries()) {
      if (WORK_PERIOD.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    }
  }
  assert.deepEqual(found, []);
});
