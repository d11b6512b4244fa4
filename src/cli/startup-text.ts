import { createRequire } from "node:module";
import type { NetworkInterfaceInfo } from "node:os";
import type * as Uqr from "uqr";
import { reachableUrls } from "../server/lan-addresses.js";

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** A QR code of `link` for a terminal, drawn with half blocks (light modules as blocks: for a dark terminal). */
export function terminalQr(link: string): string {
  // Loaded only to draw one: most starts print none.
  const { renderUnicodeCompact } = createRequire(import.meta.url)("uqr") as typeof Uqr;
  return renderUnicodeCompact(link, { border: 1 });
}

export interface StartupTextInput {
  /** The server's own URL (`http://0.0.0.0:7420` when it listens on everything). */
  readonly url: string;
  /** Printed only when the token is new or asked for; else null and `howToGetLink` says how. */
  readonly token: string | null;
  readonly howToGetLink: string;
  readonly interfaces?: Interfaces;
}

/**
 * What `berth serve` prints on stdout: one line with the dashboard's address (the LAN address
 * when it listens beyond loopback, never `0.0.0.0`) and the ACP endpoint; the other LAN
 * addresses; and, when the line carries the token and a phone could reach it, a QR code of the
 * link.
 */
export function startupText({ url, token, howToGetLink, interfaces }: StartupTextInput): string {
  const urls = reachableUrls(url, interfaces);
  const base = urls[0]!;
  const acp = `${base.replace(/^http/, "ws")}/acp`;
  const lines = [
    token === null ? `Berth is running: ${base}/ (ACP: ${acp}); ${howToGetLink}` : `Berth is running: ${base}/?token=${token} (ACP: ${acp})`,
  ];
  if (urls.length > 1)
    lines.push(
      `Also on: ${urls
        .slice(1)
        .map((other) => `${other}/`)
        .join(", ")}`,
    );
  const lanReachable = !/^http:\/\/(127\.|\[::1\]|localhost)/.test(base);
  if (token !== null && lanReachable) {
    lines.push("", "Open it on a phone on the same network (this code holds the token):", terminalQr(`${base}/?token=${token}`));
  }
  return `${lines.join("\n")}\n`;
}
