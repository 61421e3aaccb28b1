// Checks the frames the tswire tests received against the TypeScript clients' own zod schemas
// (a development check; the suite does not depend on it). See docs/ts-clients.md, "Tests".
import { WSOutboundMessageSchema } from "./packages/server/src/shared/messages.ts";
import { TerminalStateSchema } from "./packages/server/src/shared/messages.ts";
import { FileBeginMetadataSchema } from "./packages/server/src/shared/binary-frames/file-transfer.ts";
import { readFileSync } from "node:fs";
const lines = readFileSync(process.argv[2], "utf-8").split("\n").filter(Boolean);
let bad = 0;
const seen = new Map<string, number>();
for (const line of lines) {
  const rec = JSON.parse(line);
  const schema =
    rec.kind === "snapshot" ? TerminalStateSchema
    : rec.kind === "file_begin" ? FileBeginMetadataSchema
    : WSOutboundMessageSchema;
  const r = schema.safeParse(rec.frame);
  const t = rec.kind === "snapshot" ? "terminal_snapshot" : rec.kind === "file_begin" ? "file_begin" : (rec.frame.type === "session" ? rec.frame.message.type + (rec.frame.message.payload?.status ? ":" + rec.frame.message.payload.status : "") : rec.frame.type);
  seen.set(t, (seen.get(t) ?? 0) + 1);
  if (!r.success) { bad++; console.log("FAIL", t, JSON.stringify(r.error.issues).slice(0, 600)); }
}
console.log(JSON.stringify(Object.fromEntries(seen)));
console.log(`checked ${lines.length} frames, ${bad} rejected`);
