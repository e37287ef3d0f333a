// What every client script shares: the conversation with the Go test that runs it.
// The script prints one JSON object per line on stdout:
//   {"event":"connected","protocolVersion":…,"tools":[…]}
//   {"event":"elicitation","params":{…}}        the server asked (SSE request or input_required)
//   {"event":"url_required","elicitations":[…]} the call failed with -32042
//   {"event":"result","result":{…},"progress":N,"attempts":N}
//   {"event":"error","code":…,"message":…}
// and after "elicitation" or "url_required" waits for one line on stdin: the person's
// action ("accept" or "decline") once the Go test has played its part on the page.
import { createInterface } from 'node:readline';

const stdin = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

export function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function nextLine() {
  const { value, done } = await stdin.next();
  if (done) throw new Error('stdin closed while waiting for the Go test');
  return value.trim();
}

// elicitationCapability turns "form,url" or "form" into the declared capability;
// form alone is declared as {} (what older clients such as Claude Code 2.1.197 send).
export function elicitationCapability(modes) {
  const list = modes.split(',');
  return list.includes('url') ? { form: {}, url: {} } : {};
}

// answerElicitation is the elicitation/create handler: show the request, wait for the
// person, answer. In URL mode "accept" only means the link was opened (consent).
export async function answerElicitation(params) {
  emit({ event: 'elicitation', params });
  const action = await nextLine();
  if (params.mode === 'url') return { action: 'accept' };
  return action === 'accept' ? { action: 'accept', content: { approved: true } } : { action: 'decline' };
}

// run lists the tools and calls deploy once, the way an app does it: on -32042
// (URL elicitation required) it shows the link, waits for the person and re-sends
// the very same call. call(options) performs one callTool with request options.
export async function run(client, protocolVersion, call) {
  const { tools } = await client.listTools();
  emit({ event: 'connected', protocolVersion, tools: tools.map(t => t.name) });
  let progress = 0;
  const options = { onprogress: () => progress++, resetTimeoutOnProgress: true, timeout: 120_000 };
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      const result = await call(options);
      emit({ event: 'result', result, progress, attempts: attempt });
      return;
    } catch (err) {
      if (err?.code !== -32042) {
        emit({ event: 'error', code: err?.code, message: String(err?.message ?? err), data: err?.data });
        return;
      }
      emit({ event: 'url_required', elicitations: err.data?.elicitations ?? [] });
      await nextLine();
    }
  }
  emit({ event: 'error', message: 'still -32042 after 5 attempts' });
}
