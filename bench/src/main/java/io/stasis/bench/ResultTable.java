package io.stasis.bench;

import java.util.ArrayList;
import java.util.List;

/** The report as a plain-text table for stdout, with the machine and the percentile method below it. */
final class ResultTable {
    private static final List<String> HEADER = List.of("figure", "unit", "n", "p50", "p90", "p95", "p99", "min", "max", "target", "met?",
            "floor p50", "ratio");

    private ResultTable() {
    }

    static String render(Report report) {
        var rows = new ArrayList<List<String>>();
        rows.add(HEADER);
        for (Figure f : report.figures()) {
            var s = f.stats();
            rows.add(List.of(f.name(), f.unit(), Integer.toString(s.n()), Format.number(s.p50()), Format.number(s.p90()),
                    Format.number(s.p95()), Format.number(s.p99()),
                    Format.number(s.min()), Format.number(s.max()),
                    f.target().map(Target::describe).orElse("-"),
                    f.met().map(met -> met ? "yes" : "NO").orElse("-"),
                    f.floor().map(fl -> Format.number(fl.p50())).orElse("-"),
                    f.floor().map(fl -> Format.number(fl.ratio()) + "x").orElse("-")));
        }
        int[] widths = new int[HEADER.size()];
        for (var row : rows)
            for (int c = 0; c < row.size(); c++) widths[c] = Math.max(widths[c], row.get(c).length());
        var out = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            var row = rows.get(r);
            var line = new StringBuilder();
            for (int c = 0; c < row.size(); c++) {
                String cell = row.get(c);
                // Names and words left-aligned, numbers right-aligned.
                boolean left = c == 0 || c == 1 || c == 9 || c == 10;
                String pad = " ".repeat(widths[c] - cell.length());
                line.append(c == 0 ? "" : "  ").append(left ? cell + pad : pad + cell);
            }
            out.append(line.toString().stripTrailing()).append('\n');
            if (r == 0) out.append("-".repeat(line.length())).append('\n');
        }
        var m = report.machine();
        out.append('\n').append("machine: kernel ").append(m.kernel()).append(", ").append(m.cores()).append(" cores (")
                .append(m.cpuModel()).append("), ").append(m.memTotalBytes() >> 20).append(" MiB, load average at start ")
                .append(m.loadAverage()).append(", ").append(m.startedAt()).append('\n');
        out.append("percentiles: ").append(Stats.PERCENTILE_METHOD).append("; floor p50 = sum of its parts' p50; ratio = p50 / floor p50\n");
        out.append("run took ").append(report.duration().toSeconds()).append(" s\n");
        report.errors().forEach((scenario, why) -> out.append("FAILED ").append(scenario).append(": ").append(why).append('\n'));
        return out.toString();
    }
}
