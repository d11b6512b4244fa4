/** Where Berth puts a journaled update's sequence number in a notification's `_meta` (see docs/api.md). */
export const SEQ_META = "berth/seq";
/** On a chunk merged from several journaled chunks: the first one's seq (`berth/seq` is the last one's). */
export const SEQ_FROM_META = "berth/seqFrom";
