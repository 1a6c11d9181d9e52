// The instant model provider of the agent benchmark: a local HTTP server answering the OpenAI
// Chat Completions protocol at once, and an instant HTTP tool (`POST /tool`). The user message
// says how many model turns the run takes (`turns=3`): the model calls the `ping` tool while the
// conversation holds fewer than turns - 1 tool results, then answers `done`.
import http from 'node:http';

function answer(body) {
  const results = body.messages.filter((m) => m.role === 'tool').length;
  const wanted = Number(String(body.messages.find((m) => m.role === 'user')?.content ?? '').match(/turns=(\d+)/)?.[1] ?? 1) - 1;
  const message =
    results < wanted
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${results}`, type: 'function', function: { name: 'ping', arguments: '{"n":1}' } }],
        }
      : { role: 'assistant', content: 'done' };
  return {
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'bench-model',
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  };
}

/** Resolves with `{origin, requests: {chat, tool}, close()}` once it listens on 127.0.0.1. */
export function startInstantProvider() {
  const requests = { chat: 0, tool: 0 };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      if (req.url === '/tool') {
        requests.tool += 1;
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }
      requests.chat += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(JSON.parse(text))));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ origin: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((done) => server.close(done)) }),
    ),
  );
}

/** The benchmark's workflow: webhook (`last_step`: the caller gets the agent's answer) -> agent with one HTTP tool. */
export function agentGraph(connectionId, origin) {
  return {
    nodes: [
      { id: 'hook', type: 'webhook', config: { response_mode: 'last_step' }, position: { x: 0, y: 0 } },
      {
        id: 'agent',
        type: 'agent',
        position: { x: 200, y: 0 },
        config: {
          connection_id: connectionId,
          model: 'bench-model',
          system: 'You are a benchmark.',
          prompt: '{{ trigger.body.text }}',
          tools: [
            {
              type: 'http',
              name: 'ping',
              description: 'Answers at once',
              method: 'POST',
              url: `${origin}/tool`,
              input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
            },
          ],
        },
      },
    ],
    edges: [{ source: 'hook', target: 'agent' }],
  };
}
