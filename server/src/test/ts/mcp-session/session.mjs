// A scripted agent session over Streamable HTTP with the official TypeScript MCP SDK, run by
// McpIT: create a sandbox, write a python file, run it, read its output, see an API error as a
// tool error, delete the sandbox. Env: STASIS_MCP_URL, STASIS_API_KEY, STASIS_TEMPLATE.
// Prints one line per step; exits non-zero at the first step that fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.STASIS_MCP_URL;
const key = process.env.STASIS_API_KEY;
const template = process.env.STASIS_TEMPLATE ?? "base";
// The first create of 'base' on a fresh machine builds the template (debootstrap): minutes.
const slow = { timeout: 15 * 60 * 1000 };

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function text(result) {
  return result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function call(client, name, args, options) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  console.log(`${name}: ${result.isError ? "error " : ""}${text(result).split("\n")[0]}`);
  return result;
}

const client = new Client({ name: "stasis-mcp-it", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
let sandbox;
try {
  await client.connect(transport);
  console.log(`connected: ${client.getServerVersion().name} ${client.getServerVersion().version}`);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const needed of ["sandbox_create", "file_write", "sandbox_exec", "file_read", "sandbox_delete"]) {
    check(names.includes(needed), `tools/list lacks ${needed}: ${names}`);
  }

  const created = await call(client, "sandbox_create", { template }, slow);
  check(!created.isError, `create failed: ${text(created)}`);
  sandbox = created.structuredContent.id;
  check(sandbox.startsWith("sbx_"), `no sandbox id in ${JSON.stringify(created.structuredContent)}`);

  const written = await call(client, "file_write", {
    sandbox, path: "/root/hello.py", content: 'import sys\nprint("hello from python", sys.version_info[0], 6 * 7)\n',
  });
  check(!written.isError, `write failed: ${text(written)}`);

  const ran = await call(client, "sandbox_exec", { sandbox, command: "python3 /root/hello.py | tee /root/out.txt" });
  check(!ran.isError && ran.structuredContent.exitCode === 0, `exec failed: ${text(ran)}`);
  check(text(ran).includes("hello from python 3 42"), `unexpected output: ${text(ran)}`);

  const read = await call(client, "file_read", { sandbox, path: "/root/out.txt" });
  check(text(read) === "hello from python 3 42\n", `unexpected file: ${JSON.stringify(text(read))}`);

  const missing = await call(client, "sandbox_get", { sandbox: "sbx_doesnotexist" });
  check(missing.isError && text(missing).includes("sandbox_not_found"), `expected a tool error: ${text(missing)}`);
} finally {
  if (sandbox) {
    const deleted = await call(client, "sandbox_delete", { sandbox });
    check(!deleted.isError, `delete failed: ${text(deleted)}`);
  }
  await client.close();
}
console.log("session ok");
