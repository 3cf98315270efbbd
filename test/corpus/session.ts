/**
 * The session reader the corpus tests use: the production reader of `context-fold replay`
 * (`src/replay/session-file.ts`), re-exported so the corpus modules keep one import path.
 */
export * from "../../src/replay/session-file.ts";
