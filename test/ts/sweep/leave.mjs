// A client that leaves its server behind (test/sweep_test.go): the official
// TypeScript SDK's StdioClientTransport starts the command, as Claude Code
// and VS Code start theirs (a socket pair for its stdio), lists its tools,
// prints {"pid": the server's pid, "tools": how many} and then waits,
// until the test kills it with SIGKILL.
//
//   node leave.mjs '{"command": ..., "args": [...], "cwd": ..., "env": {...}}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command: spec.command, args: spec.args ?? [], cwd: spec.cwd, env: spec.env, stderr: "ignore" });
const client = new Client({ name: "sweep-test-client", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(JSON.stringify({ pid: transport.pid, tools: tools.length }));
setInterval(() => {}, 1e6);
