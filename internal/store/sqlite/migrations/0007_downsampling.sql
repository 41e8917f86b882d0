-- fathom results store, schema 7: downsampled samples. A long watch session keeps
-- full resolution for recent samples only; older readings are merged into buckets
-- (store.WatchDownsampling), each point standing for n readings over span_ns, with
-- the charted quantity's lowest and highest reading (lo, hi: a counter's rate, a
-- gauge's value). A collector's merged ok samples are one row with its count n.
ALTER TABLE metric_points ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
ALTER TABLE metric_points ADD COLUMN lo REAL;
ALTER TABLE metric_points ADD COLUMN hi REAL;
ALTER TABLE metric_points ADD COLUMN span_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
