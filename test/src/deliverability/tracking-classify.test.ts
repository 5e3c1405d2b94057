/**
 * Who is not a person: the user agents of link scanners, security gateways, mail-privacy and image proxies and
 * scripts (their hits are recorded but flagged), and the Location a redirect answers with.
 */
import { describe, expect, it } from 'vitest';
import { scannerUserAgent } from '../../../src/deliverability/tracking-service.js';
import { locationOf } from '../../../server/routes/tracking.js';

describe('scannerUserAgent', () => {
  const scanners = [
    undefined,
    '',
    '   ',
    'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
    'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
    'Barracuda Sentinel (EE)',
    'Proofpoint URL Defense',
    'Mimecast-Url-Protect',
    'urldefense.com',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) BingPreview/1.0b',
    'python-requests/2.31.0',
    'curl/8.5.0',
    'Go-http-client/1.1',
    'Wget/1.21',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Some Crawler 1.0',
    'LinkPreview/2',
    'Mozilla/5.0 HeadlessChrome/120.0',
  ];
  const people = [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17726; Pro)',
    'Thunderbird/115.0',
  ];
  for (const agent of scanners)
    it(`scanner: ${JSON.stringify(agent)}`, () => expect(scannerUserAgent(agent)).toBe(true));
  for (const agent of people) it(`person: ${agent.slice(0, 60)}`, () => expect(scannerUserAgent(agent)).toBe(false));
});

describe('locationOf', () => {
  it('keeps a plain ASCII URL as recorded, normalises one with spaces or non-ASCII characters', () => {
    expect(locationOf('https://a.example/x?y=1&z=2')).toBe('https://a.example/x?y=1&z=2');
    expect(locationOf('https://a.example')).toBe('https://a.example');
    expect(locationOf('https://a.example/a b')).toBe('https://a.example/a%20b');
    expect(locationOf('https://bücher.example/é')).toBe('https://xn--bcher-kva.example/%C3%A9');
  });
});
