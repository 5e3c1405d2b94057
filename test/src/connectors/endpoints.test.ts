import { describe, expect, it } from 'vitest';
import { connectorEndpoints } from '../../../src/connectors/index.js';

describe('connectorEndpoints', () => {
  it("gives Google's real endpoints by default", () => {
    expect(connectorEndpoints('google', {})).toEqual({
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      revocationUrl: 'https://oauth2.googleapis.com/revoke',
      userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
      imap: { host: 'imap.gmail.com', port: 993, secure: true },
      smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
      caldavUrl: 'https://apidata.googleusercontent.com/caldav/v2',
      carddavUrl: 'https://www.googleapis.com/carddav/v1',
      allowInsecureTls: false,
    });
  });

  it("gives Microsoft's, on the common tenant unless one is set; submission on 587 is STARTTLS", () => {
    const endpoints = connectorEndpoints('microsoft', {});
    expect(endpoints).toMatchObject({
      authorizationUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      imap: { host: 'outlook.office365.com', port: 993, secure: true },
      smtp: { host: 'smtp.office365.com', port: 587, secure: false },
    });
    expect(endpoints.revocationUrl).toBeUndefined();
    expect(endpoints.caldavUrl).toBeUndefined();
    expect(connectorEndpoints('microsoft', { tenant: 'contoso.onmicrosoft.com' }).tokenUrl).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token',
    );
  });

  it('takes every override from the settings (how tests point a connector at loopback servers)', () => {
    expect(
      connectorEndpoints('google', {
        authorization_url: 'http://127.0.0.1:4000/auth',
        token_url: 'http://127.0.0.1:4000/token',
        revocation_url: 'http://127.0.0.1:4000/revoke',
        userinfo_url: 'http://127.0.0.1:4000/me',
        imap_host: '127.0.0.1',
        imap_port: 1143,
        smtp_host: 'localhost',
        smtp_port: 1587,
        caldav_url: 'http://127.0.0.1:5232/',
        carddav_url: 'http://127.0.0.1:5232/',
        allow_insecure_tls: true,
      }),
    ).toEqual({
      authorizationUrl: 'http://127.0.0.1:4000/auth',
      tokenUrl: 'http://127.0.0.1:4000/token',
      revocationUrl: 'http://127.0.0.1:4000/revoke',
      userinfoUrl: 'http://127.0.0.1:4000/me',
      imap: { host: '127.0.0.1', port: 1143, secure: false },
      smtp: { host: 'localhost', port: 1587, secure: false },
      caldavUrl: 'http://127.0.0.1:5232/',
      carddavUrl: 'http://127.0.0.1:5232/',
      allowInsecureTls: true,
    });
  });

  it('keeps the default port of a host given alone, and the default host of a port given alone', () => {
    expect(connectorEndpoints('google', { imap_host: 'mail.example.test' }).imap).toEqual({
      host: 'mail.example.test',
      port: 993,
      secure: true,
    });
    expect(connectorEndpoints('google', { smtp_port: 587 }).smtp).toEqual({
      host: 'smtp.gmail.com',
      port: 587,
      secure: false,
    });
  });

  it('has nothing for an IMAP connector without overrides, and only what is set with them', () => {
    expect(connectorEndpoints('imap', {})).toEqual({ allowInsecureTls: false });
    expect(connectorEndpoints('imap', { imap_host: 'imap.example.test', smtp_host: 'smtp.example.test' })).toEqual({
      imap: { host: 'imap.example.test', port: 993, secure: true },
      smtp: { host: 'smtp.example.test', port: 465, secure: true },
      allowInsecureTls: false,
    });
  });
});
