package io.stasis.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * The report as a plain-text table for stdout, with the machine and the percentile method below it;
 * after a run of both runtimes, a second table puts each gVisor figure beside runc's.
 */
final class ResultTable {
    private static final List<String> HEADER = List.of("figure", "unit", "n", "p50", "p90", "p95", "p99", "min", "max", "target", "met?",
            "floor p50", "ratio");
    private static final List<String> SIDE_BY_SIDE_HEADER = List.of("figure", "unit", "runc p50", "gvisor p50", "gvisor / runc");

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
        var out = new StringBuilder();
        aligned(rows, Set.of(0, 1, 9, 10), out);
        var sideBySide = sideBySide(report.figures());
        if (sideBySide.size() > 1) {
            out.append('\n').append("runc and gVisor side by side, each from its own pass of this run:\n");
            aligned(sideBySide, Set.of(0, 1), out);
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

    /** Rows of each gVisor figure ({@value Benchmark#GVISOR_PREFIX}*) that runc's pass has too: the header alone if none. */
    static List<List<String>> sideBySide(List<Figure> figures) {
        var runc = new LinkedHashMap<String, Figure>();
        for (Figure f : figures) if (!f.name().startsWith(Benchmark.GVISOR_PREFIX)) runc.put(f.name(), f);
        var rows = new ArrayList<List<String>>();
        rows.add(SIDE_BY_SIDE_HEADER);
        for (Figure gvisor : figures) {
            if (!gvisor.name().startsWith(Benchmark.GVISOR_PREFIX)) continue;
            Figure own = runc.get(gvisor.name().substring(Benchmark.GVISOR_PREFIX.length()));
            if (own == null) continue;
            double ratio = gvisor.stats().p50() / own.stats().p50();
            rows.add(List.of(own.name(), own.unit(), Format.number(own.stats().p50()), Format.number(gvisor.stats().p50()),
                    Double.isFinite(ratio) ? Format.number(ratio) + "x" : "-"));
        }
        return rows;
    }

    /** {@code rows} as columns of one width each, a rule under the header; the columns in {@code left} left-aligned (names, words), the others right (numbers). */
    private static void aligned(List<List<String>> rows, Set<Integer> left, StringBuilder out) {
        int[] widths = new int[rows.getFirst().size()];
        for (var row : rows)
            for (int c = 0; c < row.size(); c++) widths[c] = Math.max(widths[c], row.get(c).length());
        for (int r = 0; r < rows.size(); r++) {
            var row = rows.get(r);
            var line = new StringBuilder();
            for (int c = 0; c < row.size(); c++) {
                String cell = row.get(c);
                String pad = " ".repeat(widths[c] - cell.length());
                line.append(c == 0 ? "" : "  ").append(left.contains(c) ? cell + pad : pad + cell);
            }
            out.append(line.toString().stripTrailing()).append('\n');
            if (r == 0) out.append("-".repeat(line.length())).append('\n');
        }
    }
}
