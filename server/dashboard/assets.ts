/**
 * The dashboard's two assets, served by the service itself (no CDN): a small style sheet and a small script that
 * shows times in the viewer's time zone (and tells the server that zone in the cookie `agentpost_time_zone`, for the
 * overview's counts of the day), fills copy buttons and asks before destructive forms. Every page works
 * without the script. Kept as strings so the one TypeScript build ships them.
 */

/** The style sheet (`/assets/dashboard.css`). */
export const DASHBOARD_CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b5cad;--danger:#b42318;--panel:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9aa4ae;--line:#30363d;--accent:#6cb6ff;--danger:#ff7b72;--panel:#161b22}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem}
header.top{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between;padding:.75rem 1.5rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.top .brand{font-weight:700;text-decoration:none;color:var(--fg)}
nav.main ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
nav.main a[aria-current=page]{font-weight:700;text-decoration:none}
main{max-width:72rem;margin:0 auto;padding:1rem 1.5rem 3rem}
table{border-collapse:collapse;width:100%;margin:1rem 0}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border-bottom:1px solid var(--line);padding:.4rem .5rem;text-align:left;vertical-align:top}
.muted{color:var(--muted)}
.error{color:var(--danger);border-left:4px solid var(--danger);padding:.5rem .75rem;background:var(--panel)}
.notice{border-left:4px solid var(--accent);padding:.5rem .75rem;background:var(--panel)}
form.inline{display:inline}
form.stack{display:grid;gap:.5rem;max-width:36rem;margin:1rem 0}
label{display:block;font-weight:600}
input,select,textarea,button{font:inherit}
input[type=text],input[type=password],input[type=email],input[type=search],input[type=number],select,textarea{width:100%;padding:.35rem;border:1px solid var(--line);border-radius:4px;background:var(--bg);color:var(--fg)}
button{padding:.3rem .8rem;border:1px solid var(--accent);border-radius:4px;background:var(--accent);color:#fff;cursor:pointer}
button.danger{background:var(--danger);border-color:var(--danger)}
button.copy{padding:0 .5rem;background:transparent;color:var(--accent);margin-left:.25rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:1rem;margin:1rem 0}
.card{border:1px solid var(--line);border-radius:6px;padding:.75rem 1rem;background:var(--panel)}
.card .figure{font-size:1.6rem;font-weight:700}
.card .figure span{font-size:.9rem;font-weight:400}
.pager{display:flex;gap:1rem;margin:1rem 0}
pre{white-space:pre-wrap;background:var(--panel);padding:1rem;border-radius:4px;overflow:auto}
code{word-break:break-all}
fieldset{border:1px solid var(--line);border-radius:4px}
.ok{color:#1a7f37}
`;

/** The script (`/assets/dashboard.js`): progressive enhancement only. */
export const DASHBOARD_JS = `
'use strict';
(function () {
  for (const element of document.querySelectorAll('time[datetime]')) {
    const when = new Date(element.getAttribute('datetime'));
    if (!Number.isNaN(when.getTime())) {
      element.title = element.textContent;
      element.textContent = when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
    }
  }
  for (const button of document.querySelectorAll('button[data-copy]')) {
    if (!navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(button.getAttribute('data-copy')).then(function () {
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = 'Copy'; }, 1500);
      });
    });
  }
  // The viewer's time zone, for what the server counts by day (the overview's mail today): a cookie under the mount.
  const script = document.currentScript;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (script && zone) {
    const asset = new URL(script.src).pathname;
    const mount = asset.slice(0, asset.lastIndexOf('/assets/'));
    document.cookie = 'agentpost_time_zone=' + encodeURIComponent(zone) + '; path=' + mount + '; max-age=31536000; samesite=strict';
  }
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', function (event) {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  }
})();
`;
