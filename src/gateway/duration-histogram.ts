/** One sample as prom-client's registry reads it: `sharedLabels` are the series', `labels` its own. */
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels?: Readonly<Record<string, string>>;
  value: number;
  metricName: string;
  /** `null` on a bucket, as prom-client writes it (no exemplars here). */
  exemplar?: null;
}

/** A metric's samples, as prom-client's registry reads them. */
interface Samples {
  name: string;
  help: string;
  type: "histogram";
  values: Sample[];
  aggregator: "sum";
}

/** One label set's buckets of a {@link DurationHistogram}. */
export class DurationSeries {
  /** Observations per bucket, not cumulative: `counts[i]` are those in `(bounds[i-1], bounds[i]]`. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  /** Records one duration in seconds: a bound search and three additions, nothing allocated. */
  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * A Prometheus histogram registered in a prom-client `Registry` (`registry.registerMetric`),
 * written out exactly as prom-client's `Histogram` writes one, whose series are objects of
 * ours: prom-client's `observe` checks the labels and builds their key on every call (about
 * 3k instructions a request under callgrind), this only finds the bucket.
 */
export class DurationHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #series: DurationSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[],
  ) {}

  /** A new series with `labels` (the caller keeps it and asks for each label set once). */
  series(labels: Readonly<Record<string, string>>): DurationSeries {
    const series = new DurationSeries(labels, this.bounds);
    this.#series.push(series);
    return series;
  }

  /** The samples with the series' labels apart, as the registry's text format reads them. */
  getForPromString(): Samples {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.#series) {
      // As prom-client: a label set appears from its first observation (again after a reset).
      if (series.count === 0) continue;
      const sharedLabels = series.labels;
      let total = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        total += series.counts[i]!;
        values.push({
          labels: { le: this.bounds[i]! },
          sharedLabels,
          value: total,
          metricName: bucket,
          exemplar: null,
        });
      }
      values.push({
        labels: { le: "+Inf" },
        sharedLabels,
        value: series.count,
        metricName: bucket,
        exemplar: null,
      });
      values.push({ labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: "histogram", values, aggregator: "sum" };
  }

  /** The samples with every label on each (prom-client's `get`, read by `getMetricsAsJSON`). */
  get(): Promise<Samples> {
    const data = this.getForPromString();
    // In prom-client's key order, so that the JSON reads the same.
    data.values = data.values.map(({ labels, sharedLabels, value, metricName, exemplar }) => ({
      value,
      metricName,
      exemplar,
      labels: { ...labels, ...sharedLabels },
    }));
    return Promise.resolve(data);
  }

  /** Empties every series (the registry's `resetMetrics`). */
  reset(): void {
    for (const series of this.#series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
