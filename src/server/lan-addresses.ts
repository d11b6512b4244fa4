import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";
import { hostForUrl } from "./auth.js";

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** Loopback only: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || (isIPv4(bare) && bare.startsWith("127."));
}

/**
 * The addresses another device on the network can open Berth by, best first: for `0.0.0.0` each
 * IPv4 address of this machine's interfaces (private ranges first: 192.168/16, 10/8,
 * 172.16/12, then others; link-local 169.254/16 last), for `::` those and the global IPv6
 * addresses; for one address, that address; none for a loopback address. `0.0.0.0` itself is
 * never one: no phone can open it.
 */
export function lanAddresses(listenHost: string, interfaces: Interfaces = networkInterfaces()): string[] {
  const bare = listenHost.replace(/^\[|\]$/g, "");
  if (isLoopback(bare)) return [];
  if (bare !== "0.0.0.0" && bare !== "::") return [bare];
  const found = Object.values(interfaces)
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal)
    .filter((entry) =>
      entry.family === "IPv4" ? isIPv4(entry.address) : bare === "::" && isIPv6(entry.address) && !entry.address.toLowerCase().startsWith("fe80:"),
    )
    .map((entry) => entry.address);
  return [...new Set(found)].sort((a, b) => rank(a) - rank(b));
}

/** `http://192.168.1.20:7420` for each address. */
function lanUrls(listenHost: string, port: number, interfaces?: Interfaces): string[] {
  return lanAddresses(listenHost, interfaces).map((address) => `http://${hostForUrl(address)}:${port}`);
}

/**
 * Where a person opens a host that listens on `url`: a listen-on-everything address
 * (`0.0.0.0`, `::`) is no place a browser can go, so it is this machine's LAN addresses (best
 * first), else loopback; any other address is itself.
 */
export function reachableUrls(url: string, interfaces?: Interfaces): string[] {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const port = Number(parsed.port);
  if (host !== "0.0.0.0" && host !== "::") return [url.replace(/\/$/, "")];
  const lan = lanUrls(host, port, interfaces);
  return lan.length > 0 ? lan : [`http://127.0.0.1:${port}`];
}

function rank(address: string): number {
  if (address.startsWith("192.168.")) return 0;
  if (address.startsWith("10.")) return 1;
  if (/^172\.(1[6-9]|2\d|3[01])\./.test(address)) return 2;
  if (address.startsWith("169.254.")) return 5;
  return isIPv4(address) ? 3 : 4;
}
