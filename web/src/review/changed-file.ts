import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api/rest.js";
import type { ChangedFileView } from "../api/types.js";
import { retriableImport } from "../chunk-import.js";
import type { FileReview } from "../ui/FileReview.js";
import { errorWords } from "../util/error-words.js";

/** The open file: its two sides and the diff's code (a chunk of its own), both read when a file is opened. */
export type OpenFile =
  | { readonly name: "none" }
  | { readonly name: "loading" }
  | { readonly name: "loaded"; readonly file: ChangedFileView; readonly view: typeof FileReview }
  /** The file has no changes any more (put back as it was, or the changes moved on). */
  | { readonly name: "unchanged" }
  | { readonly name: "failed"; readonly message: string };

const importReview = retriableImport(() => import("../ui/FileReview.js"));

/** Reads `path`'s sides, and again at each `revision` (the session's files changed); a file already shown stays until the new read. */
export function useChangedFile(sessionId: string, path: string | null, revision: number): OpenFile {
  const [open, setOpen] = useState<OpenFile>({ name: "none" });
  // A new file starts from "loading"; the same file read again keeps showing meanwhile.
  useEffect(() => setOpen(path === null ? { name: "none" } : { name: "loading" }), [sessionId, path]);
  useEffect(() => {
    if (path === null) return;
    let stale = false;
    Promise.all([api.changedFile(sessionId, path), importReview()]).then(
      ([file, module]) => !stale && setOpen({ name: "loaded", file, view: module.FileReview }),
      (error: unknown) => {
        if (stale) return;
        if (error instanceof ApiError && error.code === "path_not_in_changes") setOpen({ name: "unchanged" });
        else setOpen({ name: "failed", message: errorWords(error) });
      },
    );
    return () => {
      stale = true;
    };
  }, [sessionId, path, revision]);
  return open;
}
