/** Escape text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface SignInPage {
  clientName: string;
  redirectHost: string;
  /** The validated authorization request, carried through the form as hidden fields. */
  params: ReadonlyArray<readonly [string, string]>;
  login?: string;
  error?: string;
}

/**
 * The sign-in and consent page: one form (name, password, allow or deny). No script, no external
 * resource; the content security policy sent with it forbids both, and framing.
 */
export function signInPage(p: SignInPage): string {
  const hidden = p.params.map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('\n      ');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
    main { max-width: 24rem; margin: 3rem auto; background: #fff; padding: 1.5rem; border-radius: 8px; box-shadow: 0 1px 4px #0002; }
    h1 { font-size: 1.25rem; margin-top: 0; }
    label { display: block; margin-top: .75rem; font-weight: 600; }
    input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem; border: 1px solid #b8bfcc; border-radius: 4px; }
    .actions { display: flex; gap: .5rem; margin-top: 1.25rem; }
    button { flex: 1; padding: .6rem; font-size: 1rem; border-radius: 4px; border: 1px solid #2f5bd3; cursor: pointer; }
    button[value=allow] { background: #2f5bd3; color: #fff; }
    button[value=deny] { background: #fff; color: #2f5bd3; }
    .error { color: #b42318; background: #fef3f2; padding: .5rem; border-radius: 4px; }
    .who { color: #4a5468; }
  </style>
</head>
<body>
  <main>
    <h1>Sign in to the registry</h1>
    <p class="who"><strong>${escapeHtml(p.clientName)}</strong> (returning to ${escapeHtml(p.redirectHost)}) asks to act on the registry as you.</p>
    ${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}
    <form method="post" action="authorize">
      ${hidden}
      <label for="login">User name</label>
      <input id="login" name="login" type="text" autocomplete="username" required value="${escapeHtml(p.login ?? '')}">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <div class="actions">
        <button type="submit" name="decision" value="allow">Sign in and allow</button>
        <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
      </div>
    </form>
  </main>
</body>
</html>`;
}

export function errorPage(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in error</title></head>
<body style="font: 16px system-ui, sans-serif; max-width: 30rem; margin: 3rem auto"><h1>This sign-in request cannot be completed</h1><p>${escapeHtml(message)}</p></body></html>`;
}
