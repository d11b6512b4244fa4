import { errorWords } from "../util/error-words.js";
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/rest.js";
import type { DeviceLogin } from "../api/types.js";
import { rememberThisDevice } from "../auth/remember-device.js";
import { forgetDevice, isRemembered } from "../auth/token.js";
import { Ago } from "./Countdown.js";
import { formatDateTime } from "../util/format.js";

type Loading =
  | { readonly name: "loading" }
  | { readonly name: "ready"; readonly logins: readonly DeviceLogin[] }
  | { readonly name: "failed"; readonly message: string };

/**
 * "Remember this device": a login kept on this device (an HttpOnly cookie and, in this origin's
 * storage, its other half), so the dashboard opens without the link; and every remembered device,
 * each of which can be forgotten here.
 */
export function DeviceSettings() {
  const [remembered, setRemembered] = useState(isRemembered);
  const [loading, setLoading] = useState<Loading>({ name: "loading" });
  const [busy, setBusy] = useState(false);
  const reload = (): void => {
    api.logins().then(
      (logins) => setLoading({ name: "ready", logins }),
      (error: unknown) => setLoading({ name: "failed", message: errorWords(error) }),
    );
  };
  useEffect(reload, []);

  const act = (work: () => Promise<void>): void => {
    setBusy(true);
    work().then(
      () => {
        setBusy(false);
        reload();
      },
      (error: unknown) => {
        setBusy(false);
        setLoading({ name: "failed", message: errorWords(error) });
      },
    );
  };
  const remember = (): void =>
    act(async () => {
      await rememberThisDevice();
      setRemembered(true);
    });
  const forget = (login: DeviceLogin): void =>
    act(async () => {
      await api.forgetDevice(login.id);
      if (login.current) {
        forgetDevice();
        setRemembered(false);
      }
    });
  const current = loading.name === "ready" ? loading.logins.find((login) => login.current) : undefined;

  return (
    <section class="setting" aria-labelledby="device-heading">
      <h3 id="device-heading">This device</h3>
      {remembered ? (
        <>
          <p class="muted" id="device-state">
            Remembered: this browser opens the dashboard without the link, until it is forgotten here or on another device, or the access token is
            replaced.
          </p>
          {current ? (
            <button type="button" disabled={busy} aria-describedby="device-state" onClick={() => forget(current)}>
              Forget this device
            </button>
          ) : null}
        </>
      ) : (
        <>
          <p class="muted" id="device-state">
            Keep a login on this device for a year, so the dashboard opens without the link. It is a secret in an HttpOnly cookie plus one kept by
            this page; neither lets anything in without the other, and no other site can read the page's.
          </p>
          <button type="button" class="primary" disabled={busy} aria-describedby="device-state" onClick={remember}>
            Remember this device
          </button>
        </>
      )}
      <h4 class="subheading">Remembered devices</h4>
      {loading.name === "loading" ? <p class="muted">Loading…</p> : null}
      {loading.name === "failed" ? (
        <p class="error" role="alert">
          {loading.message}
        </p>
      ) : null}
      {loading.name === "ready" && loading.logins.length === 0 ? <p class="muted">None: every device needs the link.</p> : null}
      {loading.name === "ready" && loading.logins.length > 0 ? (
        <ul class="devices">
          {loading.logins.map((login) => (
            <li key={login.id}>
              <span>
                <strong>{login.label}</strong>
                {login.current ? <span class="badge info">this device</span> : null}
                <br />
                <span class="muted">
                  remembered <time title={formatDateTime(login.createdAt)}>{new Date(login.createdAt).toLocaleDateString()}</time> · last used{" "}
                  <Ago at={login.lastUsedAt} />
                </span>
              </span>
              <button
                type="button"
                class="danger quiet"
                disabled={busy}
                aria-label={`Forget ${login.label}${login.current ? " (this device)" : ""}`}
                onClick={() => forget(login)}
              >
                Forget
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
