import { api } from "../api/rest.js";
import { rememberDevice } from "./token.js";

/** Asks Berth to remember this device (its cookie) and keeps the page's half here: new tabs then open without the link. */
export async function rememberThisDevice(): Promise<void> {
  const { pageSecret } = await api.rememberDevice();
  rememberDevice(pageSecret);
}
