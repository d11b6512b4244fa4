import { UsageError } from "../exit-codes.js";
import type { ServiceDefinition } from "./service-definition.js";

/** The launchd label, and the plist's name under ~/Library/LaunchAgents. */
export const LAUNCHD_LABEL = "dev.berth.host";

/** A character XML 1.0 cannot carry at all, not even as a character reference. */
function notInXml(char: string): boolean {
  const code = char.codePointAt(0)!;
  return (code < 0x20 && char !== "\t" && char !== "\n" && char !== "\r") || code === 0xfffe || code === 0xffff;
}

/** Text as XML character data; XML 1.0 has no way to write most control characters, so those are refused. */
function xmlText(text: string): string {
  if ([...text].some(notInXml))
    throw new UsageError(`cannot write ${JSON.stringify(text)} into a plist: it holds a control character XML cannot carry`);
  return text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[char]!);
}

const string = (text: string) => `<string>${xmlText(text)}</string>`;
const key = (text: string) => `<key>${xmlText(text)}</key>`;

/** The launchd agent `berth service install` writes on macOS (docs/service.md explains each key). */
export function launchdPlist(service: ServiceDefinition, logDir: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    `  ${key("Label")}${string(LAUNCHD_LABEL)}`,
    `  ${key("ProgramArguments")}`,
    "  <array>",
    ...service.programArguments.map((word) => `    ${string(word)}`),
    "  </array>",
    `  ${key("EnvironmentVariables")}`,
    "  <dict>",
    ...Object.entries(service.environment).map(([name, value]) => `    ${key(name)}${string(value)}`),
    "  </dict>",
    `  ${key("RunAtLoad")}<true/>`,
    `  ${key("KeepAlive")}`,
    `  <dict>${key("SuccessfulExit")}<false/></dict>`,
    `  ${key("ExitTimeOut")}<integer>${service.stopTimeoutSec}</integer>`,
    `  ${key("StandardOutPath")}${string(`${logDir}/berth.log`)}`,
    `  ${key("StandardErrorPath")}${string(`${logDir}/berth.log`)}`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}
