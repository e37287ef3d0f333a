// Calls the ASK-gated deploy tool through Gatehouse with @modelcontextprotocol/sdk 1.x
// (it negotiates 2025-11-25 with initialize), over streamable HTTP.
// Usage: node sdk1.mjs <mcp endpoint> <form,url | form>
// It speaks the line protocol of driver.mjs with the Go test (tssdk_test.go).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitation, elicitationCapability, run } from './driver.mjs';

const [endpoint, modes] = process.argv.slice(2);
const client = new Client(
  { name: 'gatehouse-clienttest-sdk1', version: '1.0.0' },
  { capabilities: { elicitation: elicitationCapability(modes) } }
);
client.setRequestHandler(ElicitRequestSchema, request => answerElicitation(request.params));
const transport = new StreamableHTTPClientTransport(new URL(endpoint));
await client.connect(transport);
await run(client, transport.protocolVersion, options =>
  client.callTool({ name: 'deploy', arguments: { target: 'prod' } }, undefined, options)
);
await client.close();
