/**
 * Smart Compose's own cost, apart from the model's: the tokenizer's one-time load, counting a prompt (1,000 tokens,
 * and the longest the schema lets through, 100,000 characters), building a reply's context from a large message
 * (1 MB of HTML with a long quoted history), and whole calls over HTTP with the nylas SDK against the loopback
 * OpenAI-compatible server of the tests (plain and streamed), beside a direct call of that server: the difference is
 * what the service adds (checks, token count, message read, context, AI SDK, envelope).
 */
import { performance } from 'node:perf_hooks';
import { originalMessageData } from '../src/smart-compose/reply-context.js';
import { countTokens, loadTokenizer } from '../src/tokens/index.js';
import { composeMime, parsedOf } from '../src/outbound/compose.js';
import { addSyncedMessageRow, createImapGrant } from '../test/helpers/imap-grant.js';
import { startFakeModelServer } from '../test/helpers/openai-compatible.js';
import { startTestService } from '../test/helpers/service.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;

async function timed(times: number, call: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let index = 0; index < times; index++) {
    const started = performance.now();
    await call();
    out.push(performance.now() - started);
  }
  return out;
}

export async function run(): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {};
  const started = performance.now();
  await loadTokenizer();
  figures['tokenizer load, once (ms)'] = performance.now() - started;

  const prompt = `Write${' the'.repeat(999)}`;
  figures['count a 1,000-token prompt, median (ms)'] = median(await timed(50, () => countTokens(prompt)));
  const longest = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(1_755).slice(0, 100_000);
  figures['count a 100,000-character prompt, median (ms)'] = median(await timed(20, () => countTokens(longest)));

  const html = `<p>${'Fresh words of the reply. '.repeat(20_000)}</p><div>On Mon, Bob wrote:<br>${'&gt; quoted words. '.repeat(30_000)}</div>`;
  figures['reply context of a 1 MB HTML body, median (ms)'] = median(
    await timed(10, () =>
      originalMessageData({
        subject: 'Big',
        from: [{ email: 'bob@example.com' }],
        to: [{ email: 'alice@example.com' }],
        body: html,
      }),
    ),
  );

  const model = await startFakeModelServer();
  const service = await startTestService({
    env: {
      AGENTPOST_AI_PROVIDER: 'openai-compatible',
      AGENTPOST_AI_MODEL: 'bench',
      AGENTPOST_AI_BASE_URL: model.baseUrl,
      AGENTPOST_RATE_LIMIT_GRANT: '0',
    },
  });
  try {
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const grant = await createImapGrant(service.core, {
      applicationId,
      email: 'bench@connected.example',
      password: 'unused',
      imapPort: 1,
      smtpPort: 1,
      secrets: service.core.deps.secrets,
    });
    const input = {
      from: { email: 'bob@partner.example' },
      to: [{ email: 'bench@connected.example' }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Numbers for Q3',
      body: `Hi,\n\n${'Could you send the numbers for the third quarter? '.repeat(40)}\n\nOn Mon, Alice wrote:\n${'> earlier thread text. '.repeat(500)}`,
      isPlaintext: true,
      attachments: [],
      messageId: 'bench@test.example',
      date: new Date(),
      inReplyTo: undefined,
      references: [],
      customHeaders: [],
    };
    const messageId = await addSyncedMessageRow(service.core, {
      applicationId,
      grantId: grant,
      uid: 1,
      raw: await composeMime(input),
      parsed: parsedOf(input),
    });
    const answer = () =>
      model.answer({
        kind: 'text',
        pieces: ['Here ', 'are ', 'the ', 'numbers.'],
        usage: { prompt_tokens: 900, completion_tokens: 4 },
      });
    const direct = await timed(100, async () => {
      answer();
      const response = await fetch(`${model.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'x' }] }),
      });
      await response.json();
    });
    const plain = await timed(100, async () => {
      answer();
      await service.nylas.messages.smartCompose.composeMessageReply({
        identifier: grant,
        messageId,
        requestBody: { prompt: 'Say they are attached' },
      });
    });
    const streamed = await timed(100, async () => {
      answer();
      const response = await fetch(`${service.url}/v3/grants/${grant}/messages/${messageId}/smart-compose`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${service.apiKey}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({ prompt: 'Say they are attached' }),
      });
      await response.text();
    });
    figures['loopback model called directly, median / p95 (ms)'] =
      `${median(direct).toFixed(2)} / ${p95(direct).toFixed(2)}`;
    figures['reply over HTTP (SDK), median / p95 (ms)'] = `${median(plain).toFixed(2)} / ${p95(plain).toFixed(2)}`;
    figures['reply streamed (SSE), median / p95 (ms)'] = `${median(streamed).toFixed(2)} / ${p95(streamed).toFixed(2)}`;
  } finally {
    await service.close();
    await model.close();
  }
  return figures;
}
