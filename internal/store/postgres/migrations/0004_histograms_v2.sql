-- fathom results store on PostgreSQL, schema 4: histograms in measure.EncodeV2's
-- uncompressed encoding (see the SQLite store's 0004). No table changes: the version
-- keeps both stores numbered alike.
SELECT 1;
