/**
 * The repository explains itself (docs/STYLE.md "Code"): comments and docs cite
 * docs/, never a document outside the repository, and the files the docs point at exist.
 *
 * - Code, tests, benchmarks and scripts cite only what a reader can open: no spec document
 *   ("spec doc 2", "doc 1", "spec 3"), no issue ("issue 14", "(issue: …)", "spec issue"). The rule
 *   a comment relies on is written into a docs/ page and cited as `docs/X.md "Section"`.
 * - A citation of the shared platform notes, of a style guide beside the repository or of a path
 *   under a `shared/` folder outside it fails. The one path outside that is allowed is the public
 *   test corpus (`shared/corpus`): third-party data that test/corpus.ts locates, not a document.
 * - Every relative Markdown link and every repository path written in README.md or docs/*.md
 *   (`src/…`, `test/…`, `docs/…`) names a file or folder that exists, and every citation of a
 *   section (`docs/X.md "Section"`, in code, tests or docs) names a heading or bold label of it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SELF = relative(ROOT, import.meta.path);
const SCANNED_DIRS = ["src", "ui/src", "scripts", "bench", "test", "docs", "appliance"];
const SCANNED_FILES = ["README.md", "Makefile", "package.json", "bin/svc"];

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return walk(p);
    return /\.(ts|tsx|js|md|sh|json|css|html|service|conf|py|toml|cfg|xml)$/.test(name) ? [p] : [];
  });
}

/** What counts as citing a document outside the repository, each with the reason shown on failure. */
const OUTSIDE: Array<{ re: RegExp; why: string }> = [
  { re: /PLATFORM-NOTES/, why: "cites the shared platform notes: cite docs/PLATFORM.md" },
  { re: /(?<!docs\/)\bSTYLE\.md/, why: "cites a style guide outside docs/: cite docs/STYLE.md" },
  {
    re: /(?:\.\.\/)+shared(?:\/(?!corpus\b)|\b(?!\/))/,
    why: "cites the shared folder beside the repository: write the fact into docs/",
  },
  {
    re: /\/work\/shared(?:\/(?!corpus\b)|\b(?!\/))/,
    why: "cites /work/shared outside the repository: write the fact into docs/",
  },
];

/** Where the old citation forms are refused: everything but docs/ (whose pages are what is cited). */
const CITING_DIRS = ["src", "ui/src", "test", "bench", "scripts", "docs"];
/** docs/STYLE.md states the rule, so it names the refused forms. */
const NAMES_THE_FORMS = new Set(["docs/STYLE.md"]);

/** Citations of documents a reader of the repository cannot open, each with the reason shown on failure. */
const UNREADABLE: Array<{ re: RegExp; why: string }> = [
  { re: /\bspec (?:doc|document)s?\b/i, why: "cites a spec document" },
  { re: /\bspec [0-9]/i, why: "cites a spec document" },
  { re: /\bdoc [0-9]+\b/i, why: "cites a spec document" },
  { re: /\bissues? #?[0-9]+/i, why: "cites an issue number" },
  { re: /\(issue:|\bspec issue\b|\bissue: ["“]/i, why: "cites an issue" },
];

/** `file:line: reason` for every citation of a spec document or an issue in `text`. */
export function unreadableCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const { re, why } of UNREADABLE) {
      const m = re.exec(line);
      if (!m) continue;
      found.push(
        `${file}:${i + 1}: ${why} ("${m[0]}"), which no reader can open: cite the docs/ page and section that states the rule (write it there if none does), or drop it`,
      );
      break; // one report per line
    }
  });
  return found;
}

/** `file:line: reason` for every outside citation in `text`. */
export function outsideCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const { re, why } of OUTSIDE) if (re.test(line)) found.push(`${file}:${i + 1}: ${why}`);
  });
  return found;
}

/** Relative links and repository paths in a Markdown file that name nothing on disk. */
export function missingTargets(file: string, text: string, root: string): string[] {
  const missing: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!.split("#")[0]!;
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    if (!existsSync(resolve(root, dirname(file), target))) missing.push(`${file}: link ${m[1]}`);
  }
  for (const m of text.matchAll(/(?<![\w./~$-])((?:src|ui|test|scripts|bench|docs|appliance|bin)\/[\w./*-]*[\w/*])/g)) {
    const path = m[1]!;
    const found = path.includes("*")
      ? new Bun.Glob(path).scanSync(root).next().done === false
      : existsSync(join(root, path));
    if (!found) missing.push(`${file}: path ${path}`);
  }
  return missing;
}

const norm = (t: string) => t.replace(/`/g, "").replace(/\s+/g, " ").trim().toLowerCase();

/** Sections a page offers to cite: its headings, and the bold labels that open a paragraph or item. */
function sectionsOf(page: string): string[] {
  const heads = page.split("\n").flatMap((l) => (/^#+ /.test(l) ? [norm(l.replace(/^#+ /, ""))] : []));
  const bold = [...page.matchAll(/\*\*([^*\n]+)\*\*/g)].map((m) => norm(m[1]!));
  return [...heads, ...bold];
}

/** `docs/X.md "Section"` citations in `text` whose page or section does not exist. */
export function deadSections(file: string, text: string, readPage: (name: string) => string | undefined): string[] {
  const dead: string[] = [];
  const wrap = String.raw`\n[ \t]*(?:\*|\/\/|#)[ \t]*`;
  const re = new RegExp(
    String.raw`docs\/([A-Z][A-Z0-9-]*\.md)[,:]?[ \t]*(?:${wrap})?"([^"\n]+(?:${wrap}[^"\n]+)?)"`,
    "g",
  );
  for (const m of text.matchAll(re)) {
    const section = norm(m[2]!.replace(new RegExp(wrap, "g"), " "));
    if (/[(){}$]/.test(section)) continue; // code that names the page, not a citation
    const page = readPage(m[1]!);
    if (page === undefined) dead.push(`${file}: docs/${m[1]} does not exist`);
    else if (!sectionsOf(page).some((h) => h.includes(section)))
      dead.push(`${file}: docs/${m[1]} has no section "${section}"`);
  }
  return dead;
}

const scanned = [
  ...SCANNED_DIRS.flatMap((d) => walk(join(ROOT, d))),
  ...SCANNED_FILES.map((f) => join(ROOT, f)).filter((f) => existsSync(f)),
]
  .map((f) => relative(ROOT, f))
  .filter((f) => f !== SELF);
const markdown = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("citations stay inside the repository", () => {
  test("no source, test, script or doc cites a document outside the repository", () => {
    expect(scanned.length).toBeGreaterThan(100);
    expect(scanned.flatMap((f) => outsideCitations(f, readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });

  test("the check can fail: each outside citation is found, docs/ and the corpus are not", () => {
    const text = [
      ` * the receive buffer decides loss (${"PLATFORM"}-NOTES "UDP")`,
      `See \`../shared/${"STYLE"}.md\` for the house style.`,
      "// ingest never imports the lake (" + "STYLE" + ".md).",
      "read /work/" + "shared/spec/1-coordinator-api.md",
      "the spec in ../../" + "shared/spec",
      ' * the receive buffer decides loss (docs/PLATFORM.md "UDP receive buffer")',
      ' * ingest never imports the lake (docs/STYLE.md "Layers")',
      "const corpus = resolve(import.meta.dir, '../../" + "shared/corpus'); // or /work/" + "shared/corpus",
    ].join("\n");
    expect(outsideCitations("x.ts", text).map((p) => p.split(":").slice(0, 2).join(":"))).toEqual([
      "x.ts:1",
      "x.ts:2",
      "x.ts:2",
      "x.ts:3",
      "x.ts:4",
      "x.ts:5",
    ]);
  });
});

describe("code, tests, benchmarks and scripts cite only what a reader can open", () => {
  const citing = scanned.filter((f) => CITING_DIRS.some((d) => f.startsWith(`${d}/`)) && !NAMES_THE_FORMS.has(f));

  test("no spec document and no issue is cited in src/, ui/src/, test/, bench/, scripts/ or docs/", () => {
    expect(citing.length).toBeGreaterThan(100);
    expect(citing.flatMap((f) => unreadableCitations(f, readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });

  test("the check can fail: each old form is found, docs/ citations and code are not", () => {
    const text = [
      ` * The receiver (${"spec"} doc 2 "Receiver"): InfluxDB-compatible`,
      ` * mapping rows for line-protocol tables"; ${"doc"} 1 "Mapping rows", proto 300).`,
      ` * Time specs (${"Spec"} 3 "Search client").`,
      `/** Issue ${"14"}: the node port is unauthenticated. */`,
      ` * kill -9 torture (${"issue"} 18, "Judged by": ...)`,
      ` * Durability under SIGKILL (${"issue"}: "kill -9 at random moments").`,
      `/** deep links (spec ${"issue"}: they open the search). */`,
      ` * Line protocol (docs/LINE-PROTOCOL.md "Table and column rules", rule 5).`,
      "  const refuse = (reason: string) => ({ issue: { reason } });",
      " * documented in docs/API.md; the spec of HEP3 says so; tissue 12 is not an issue.",
    ].join("\n");
    expect(unreadableCitations("x.ts", text).map((p) => p.split(":").slice(0, 2).join(":"))).toEqual([
      "x.ts:1",
      "x.ts:2",
      "x.ts:3",
      "x.ts:4",
      "x.ts:5",
      "x.ts:6",
      "x.ts:7",
    ]);
    expect(unreadableCitations("x.ts", ` * rows (${"spec"} doc 2).`)[0]).toBe(
      'x.ts:1: cites a spec document ("spec doc"), which no reader can open: cite the docs/ page and section that states the rule (write it there if none does), or drop it',
    );
  });
});

describe("docs point at files that exist", () => {
  const readPage = (name: string) =>
    existsSync(join(ROOT, "docs", name)) ? readFileSync(join(ROOT, "docs", name), "utf8") : undefined;

  test('every `docs/X.md "Section"` citation names a page and one of its headings (or bold labels)', () => {
    expect(scanned.flatMap((f) => deadSections(f, readFileSync(join(ROOT, f), "utf8"), readPage))).toEqual([]);
  });

  test("the check can fail: a missing page and a missing section are reported, wrapped citations are read whole", () => {
    const text = [
      ' * offline (docs/PLATFORM.md "DuckDB offline"), see docs/PLATFORM.md "UDP receive',
      ' * buffer" and docs/DUCKLAKE.md "Lock"; docs/PLATFORM.md "Reading" is fine as a prefix.',
      ' * Gone: docs/PLATFORM.md "Quantum sockets", docs/NOPE.md "Intro", docs/PLATFORM.md "UDP receive',
      ' * window".',
      'const doc = readFileSync(join(ROOT, "docs/OPERATIONS.md"), "utf8");',
    ].join("\n");
    expect(deadSections("x.ts", text, readPage)).toEqual([
      'x.ts: docs/PLATFORM.md has no section "quantum sockets"',
      "x.ts: docs/NOPE.md does not exist",
      'x.ts: docs/PLATFORM.md has no section "udp receive window"',
    ]);
  });

  test("every relative link and repository path in README.md and docs/*.md exists", () => {
    expect(markdown.length).toBeGreaterThan(10);
    expect(markdown.flatMap((f) => missingTargets(f, readFileSync(join(ROOT, f), "utf8"), ROOT))).toEqual([]);
  });

  test("the check can fail: a missing link and a missing path are reported, existing ones are not", () => {
    const text = [
      "See [the install](INSTALL.md#first-login) and [gone](GONE.md), [site](https://example.org/x).",
      "The guard is src/lake/query/sql-guard.ts; the old one was src/lake/query/guard-v0.ts.",
      "Screenshots in docs/screenshots/, the sink in `src/ingest/pipeline.ts`.",
      "Tests in `test/e2e/ui-*.test.ts`, not in test/e2e/web-*.test.ts.",
    ].join("\n");
    expect(missingTargets("docs/X.md", text, ROOT)).toEqual([
      "docs/X.md: link GONE.md",
      "docs/X.md: path src/lake/query/guard-v0.ts",
      "docs/X.md: path test/e2e/web-*.test.ts",
    ]);
  });
});
