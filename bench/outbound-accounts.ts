/** What the outbound benches (outbound.bench.ts, statements-per-send.ts) share: not a bench itself. */

/**
 * Makes the outbound benches' two Agent Accounts on a running service: a domain `domain`, then `sender@` and
 * `reader@` of it. The sender's grant id.
 */
export async function outboundAccounts(url: string, headers: Record<string, string>, domain: string): Promise<string> {
  await fetch(`${url}/v3/admin/domains`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Bench', domain_address: domain }),
  });
  const grant = async (email: string) => {
    const response = await fetch(`${url}/v3/connect/custom`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ provider: 'nylas', settings: { email } }),
    });
    return ((await response.json()) as { data: { id: string } }).data.id;
  };
  const sender = await grant(`sender@${domain}`);
  await grant(`reader@${domain}`);
  return sender;
}
