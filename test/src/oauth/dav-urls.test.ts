/**
 * Where an OAuth grant's calendars and contacts are asked for (src/oauth/hosted-flow.ts `davUrlsOf`): the connector's
 * CalDAV and CardDAV URLs (Google's real ones by default); for Google only those its granted scope reaches, so a grant
 * of mail alone makes no request to Google's DAV APIs.
 */
import { describe, expect, it } from 'vitest';
import { connectorEndpoints } from '../../../src/connectors/endpoints.js';
import { davUrlsOf, GOOGLE_DAV_SCOPES } from '../../../src/oauth/hosted-flow.js';

const google = { provider: 'google' as const, endpoints: connectorEndpoints('google', {}) };

describe('davUrlsOf', () => {
  it('Google: its real CalDAV and CardDAV bases, each only with its scope', () => {
    expect(davUrlsOf(google, ['openid', 'https://mail.google.com/'])).toEqual({});
    expect(davUrlsOf(google, [GOOGLE_DAV_SCOPES.caldav])).toEqual({
      caldavUrl: 'https://apidata.googleusercontent.com/caldav/v2',
    });
    expect(davUrlsOf(google, [GOOGLE_DAV_SCOPES.caldav, GOOGLE_DAV_SCOPES.carddav])).toEqual({
      caldavUrl: 'https://apidata.googleusercontent.com/caldav/v2',
      carddavUrl: 'https://www.googleapis.com/carddav/v1',
    });
  });

  it("the connector's settings override the bases", () => {
    const local = {
      provider: 'google' as const,
      endpoints: connectorEndpoints('google', { caldav_url: 'http://127.0.0.1:1/' }),
    };
    expect(davUrlsOf(local, [GOOGLE_DAV_SCOPES.caldav])).toEqual({ caldavUrl: 'http://127.0.0.1:1/' });
  });

  it('Microsoft has none (its calendars need Microsoft Graph), unless the connector names a server', () => {
    expect(davUrlsOf({ provider: 'microsoft', endpoints: connectorEndpoints('microsoft', {}) }, ['openid'])).toEqual(
      {},
    );
    const named = {
      provider: 'microsoft' as const,
      endpoints: connectorEndpoints('microsoft', { carddav_url: 'https://dav.example/' }),
    };
    expect(davUrlsOf(named, ['openid'])).toEqual({ carddavUrl: 'https://dav.example/' });
  });
});
