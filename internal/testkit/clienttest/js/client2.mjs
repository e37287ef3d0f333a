// Calls the ASK-gated deploy tool through Gatehouse with @modelcontextprotocol/client 2.x
// over streamable HTTP, in either version negotiation mode:
//   auto   — server/discover, 2026-07-28: the SDK fulfils input_required results itself
//            through the elicitation/create handler and retries with requestState;
//   legacy — initialize at 2025-11-25, like the 1.x SDK.
// Usage: node client2.mjs <mcp endpoint> <form,url | form> <auto | legacy>
// It speaks the line protocol of driver.mjs with the Go test (tssdk_test.go).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { answerElicitation, elicitationCapability, run } from './driver.mjs';

const [endpoint, modes, negotiation] = process.argv.slice(2);
const client = new Client(
  { name: 'gatehouse-clienttest-client2', version: '2.0.0' },
  { capabilities: { elicitation: elicitationCapability(modes) }, versionNegotiation: { mode: negotiation } }
);
client.setRequestHandler('elicitation/create', request => answerElicitation(request.params));
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
await run(client, client.getNegotiatedProtocolVersion(), options =>
  client.callTool({ name: 'deploy', arguments: { target: 'prod' } }, options)
);
await client.close();
