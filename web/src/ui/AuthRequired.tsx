/** Shown instead of the dashboard when the token is missing or refused. Never shows any token. */
export function AuthRequired() {
  return (
    <main class="auth">
      <div class="auth-card">
        <span class="mark large" aria-hidden="true" />
        <h1>Open the link printed by berth serve</h1>
        <p>
          This dashboard needs Berth's access token, and this page has none or a wrong one. Open the link ending in <code>?token=…</code>:{" "}
          <code>berth serve</code> prints it when it makes the token, and <code>berth token --link</code> prints it whenever you ask.
        </p>
        <p class="muted">
          The token is kept in <code>token</code> in Berth's data directory on the machine it runs on. Once the link is open, this tab keeps the token
          for itself (never in a cookie, which every other site on this machine would receive) and removes it from the address bar.
        </p>
      </div>
    </main>
  );
}
