import { SingleBar, Presets } from 'cli-progress';
import { ExportJob } from '../../export/export.job.js';
import type { CliCommand } from '../cli-command.js';

/** `npm run cli -- export`: generates the open-data export now, with a progress bar on stderr. */
export const exportCommand: CliCommand = {
  usage: 'export                       generate the open-data export now (GeoJSON, gzip, metadata)',
  options: {},
  async run(app) {
    const bar = new SingleBar(
      {
        format:
          'Exporting libraries [{bar}] {percentage}% | {value}/{total} | {duration_formatted}',
        stream: process.stderr,
        // Without a terminal (CI, logs) print a line now and then instead of redrawing.
        noTTYOutput: true,
        notTTYSchedule: 5000,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    let started = false;
    const startedAt = performance.now();
    try {
      const result = await app.get(ExportJob).runNow((done, total) => {
        if (!started) {
          bar.start(total, 0);
          started = true;
        }
        bar.setTotal(total);
        bar.update(done);
      });
      if (result === 'busy') {
        throw new Error('another instance is generating the export right now; try again later');
      }
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      const version = result.version;
      return result.outcome === 'created'
        ? `Exported ${version.record_count} libraries to ${version.file_stem}.geojson(.gz) in ${seconds} s` +
            (result.removedVersions ? `; removed ${result.removedVersions} old version(s).` : '.')
        : `Nothing changed since ${version.file_stem}; no new version (${seconds} s).`;
    } finally {
      if (started) bar.stop();
    }
  },
};
