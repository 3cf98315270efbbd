/**
 * The package entry Pi loads (`package.json` → `pi.extensions`). It only re-exports the Pi adapter's
 * extension factory: it exists so that Pi, which names an extension after the folder of its
 * `index.ts`, lists it as `context-fold` (startup banner, `pi config`) instead of `pi`.
 */
export { default } from "../adapters/pi/index.ts";
