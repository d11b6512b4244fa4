import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import { rememberThisDevice } from "../auth/remember-device.js";

type Offer =
  | { readonly name: "offered" }
  | { readonly name: "saving" }
  | { readonly name: "remembered" }
  | { readonly name: "failed"; readonly message: string }
  | { readonly name: "dismissed" };

/**
 * Offered once, on the visit through the printed link: remember this device in one click, so new
 * tabs, bookmarks and links to a session open without the link. Never in the way: the page works
 * around it, and "Not now" puts it away (Settings still has it).
 */
export function RememberPrompt() {
  const [offer, setOffer] = useState<Offer>({ name: "offered" });
  if (offer.name === "dismissed") return null;
  const remember = (): void => {
    setOffer({ name: "saving" });
    rememberThisDevice().then(
      () => setOffer({ name: "remembered" }),
      (error: unknown) => setOffer({ name: "failed", message: errorWords(error) }),
    );
  };
  const dismiss = (): void => setOffer({ name: "dismissed" });
  return (
    <section class="remember-prompt" aria-label="Remember this device">
      {offer.name === "remembered" ? (
        <p role="status">Remembered: new tabs, bookmarks and links to this dashboard open without the link, until the token is replaced.</p>
      ) : (
        <p id="remember-prompt-text">
          This tab was let in by the link. Remember this device so that new tabs, bookmarks and links to a session open directly?
          {offer.name === "failed" ? (
            <span class="error" role="alert">
              {" "}
              Not remembered: {offer.message}
            </span>
          ) : null}
        </p>
      )}
      {offer.name === "remembered" ? (
        <button type="button" onClick={dismiss}>
          Close
        </button>
      ) : (
        <>
          <button type="button" class="primary" disabled={offer.name === "saving"} aria-describedby="remember-prompt-text" onClick={remember}>
            Remember this device
          </button>
          <button type="button" class="quiet" onClick={dismiss}>
            Not now
          </button>
        </>
      )}
    </section>
  );
}
