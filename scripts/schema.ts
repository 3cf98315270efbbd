/**
 * Writes docs/settings.schema.json, the JSON Schema of context-fold's settings.json section, from
 * the one settings schema in src/adapters/pi/settings-schema.ts. Run it (`npm run schema`) after
 * changing a knob: test/adapter/settings-schema.test.ts fails while the checked-in file differs.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { settingsSchemaText } from "../src/adapters/pi/settings-schema.ts";

const target = fileURLToPath(new URL("../docs/settings.schema.json", import.meta.url));
writeFileSync(target, settingsSchemaText());
console.log(`wrote ${target}`);
