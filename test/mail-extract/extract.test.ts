/**
 * The codes and links of sign-up mail (issue 40, item 3): real-looking mails as services send them.
 */
import { describe, expect, it } from 'vitest';
import { extractFromMail, MAX_CODES, MAX_LINKS } from '../../src/mail-extract/index.js';

const githubLike = {
  subject: '[Acme] Please verify your device',
  body: `<html><body><table><tr><td>
    <p>Hey octo-dev!</p>
    <p>A sign in attempt requires further verification because we did not recognize your device. To complete the sign in, enter the verification code on the unrecognized device.</p>
    <p>Device: Chrome on Linux<br>Verification code: <strong>804213</strong></p>
    <p>If you did not attempt to sign in to your account, your password may be compromised. Visit <a href="https://acme.example/settings/security">https://acme.example/settings/security</a> to create a new, strong password.</p>
    <p>Thanks,<br>The Acme Team</p>
    <p style="display:none">Your code is 111111</p>
    <p>Order 2024 · Acme, Inc. · 88 Colin P Kelly Jr Street · San Francisco, CA 94107</p>
  </td></tr></table></body></html>`,
};

const alphanumeric = {
  subject: 'Your Linear login code is QX7-K9P',
  body: 'Hi,\n\nUse this one-time code to sign in to Linear:\n\nQX7-K9P\n\nThis code expires in 10 minutes. Reference #A1B2C3D4E5F6.\n\nIf you did not request this, ignore this email.\n',
};

const magicLink = {
  subject: 'Sign in to Notion',
  body: `<html><body>
    <div><a href="https://click.mailer.example/ls/click?upn=aaaaaaa"><img alt="" src="https://mailer.example/logo.png"></a></div>
    <p>Click the button below to sign in. This link expires in 24 hours.</p>
    <p><a href="https://www.notion.example/login/magic?token=eyJhbGciOi.abc.def&amp;email=dev%40example.com" style="background:#2eaadc">Sign in to Notion</a></p>
    <p>Or use the temporary login code: <b>kzt8-mp4q-w2vd</b></p>
    <p><a href="https://www.facebook.com/notion">Facebook</a> · <a href="https://twitter.com/notion">Twitter</a></p>
    <p><a href="https://click.mailer.example/track/open?id=99">View in browser</a> · <a href="https://notion.example/unsubscribe?u=1">Unsubscribe</a></p>
  </body></html>`,
};

describe('codes and links of sign-up mail', () => {
  it('finds the digits code of a device verification mail, not the hidden one nor the year or the zip code', () => {
    const { codes, links } = extractFromMail(githubLike);
    expect(codes[0]).toMatchObject({ value: '804213', where: 'body' });
    expect(codes[0]!.context).toContain('Verification code: 804213');
    expect(codes.map((code) => code.value)).not.toContain('111111');
    expect(codes.map((code) => code.value)).not.toContain('2024');
    expect(links.map((link) => link.url)).toEqual(['https://acme.example/settings/security']);
  });

  it('finds an alphanumeric code in the subject and the body, once, and not a long reference', () => {
    const { codes } = extractFromMail(alphanumeric);
    expect(codes[0]?.value).toBe('QX7-K9P');
    expect(codes.filter((code) => code.value === 'QX7-K9P')).toHaveLength(1);
    expect(codes.map((code) => code.value)).not.toContain('A1B2C3D4E5F6');
  });

  it('ranks the magic link before tracking, social and unsubscribe links, and finds the lower-case grouped code', () => {
    const { codes, links } = extractFromMail(magicLink);
    expect(links[0]).toMatchObject({
      url: 'https://www.notion.example/login/magic?token=eyJhbGciOi.abc.def&email=dev%40example.com',
      text: 'Sign in to Notion',
      where: 'body',
    });
    const unsubscribe = links.findIndex((link) => link.url.includes('unsubscribe'));
    const browser = links.findIndex((link) => link.text === 'View in browser');
    expect(browser).toBeGreaterThan(0);
    expect(unsubscribe).toBeGreaterThan(browser);
    expect(codes[0]?.value).toBe('kzt8-mp4q-w2vd');
  });

  it('finds a code with no keyword nowhere, and a plain-text URL in the subject', () => {
    const found = extractFromMail({
      subject: 'Confirm https://app.example/confirm?t=1',
      body: 'Meeting at 10:30 in room 4512.',
    });
    expect(found.codes).toEqual([]);
    expect(found.links).toEqual([{ url: 'https://app.example/confirm?t=1', text: '', where: 'subject' }]);
  });

  it('stays bounded on hostile mail: a huge body of tokens and links is read up to its cap', () => {
    const body = `Your code is 123456. ${'code 9999-9999 https://x.example/a?b=1 '.repeat(200_000)}`;
    const found = extractFromMail({ subject: 'code '.repeat(10_000), body });
    expect(found.codes.length).toBeLessThanOrEqual(MAX_CODES);
    expect(found.links.length).toBeLessThanOrEqual(MAX_LINKS);
    expect(found.codes[0]?.value).toBe('123456');
  });
});
