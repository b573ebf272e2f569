/**
 * Bun's `import x from "./f.so" with { type: "file" }` yields the file's path: the source path when
 * run from the tree, `/$bunfs/root/<name>-<content hash>.<ext>` inside a compiled executable.
 * TypeScript has no notion of import attributes deciding a module's shape, so declare it here.
 */
declare module "*.so" {
  const path: string;
  export default path;
}
