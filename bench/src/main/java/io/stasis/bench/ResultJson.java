package io.stasis.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** The report as JSON, written whole to a temporary file and then moved into place. */
final class ResultJson {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ResultJson() {
    }

    static ObjectNode toJson(Report report) {
        ObjectNode root = JSON.createObjectNode();
        root.put("tool", "stasis-bench");
        var m = report.machine();
        ObjectNode machine = root.putObject("machine");
        machine.put("kernel", m.kernel());
        machine.put("cpuModel", m.cpuModel());
        machine.put("cores", m.cores());
        machine.put("memTotalBytes", m.memTotalBytes());
        ArrayNode load = machine.putArray("loadAverageAtStart");
        m.loadAverage().forEach(load::add);
        machine.put("java", m.java());
        root.put("startedAt", m.startedAt().toString());
        root.put("durationSeconds", report.duration().toMillis() / 1000.0);
        root.put("percentileMethod", Stats.PERCENTILE_METHOD);

        ObjectNode options = root.putObject("options");
        options.put("iterationsScale", report.options().scale());
        ArrayNode only = options.putArray("only");
        Options.SCENARIOS.stream().filter(report.options()::runs).forEach(only::add);
        options.set("counts", JSON.valueToTree(report.counts()));
        options.put("maxSizeBytes", report.options().maxSize());
        report.options().runtimes().forEach(options.putArray("runtimes")::add);

        ArrayNode figures = root.putArray("figures");
        for (Figure f : report.figures()) {
            ObjectNode node = figures.addObject();
            node.put("name", f.name());
            node.put("scenario", f.scenario());
            node.put("unit", f.unit());
            node.put("description", f.description());
            node.put("n", f.stats().n());
            node.put("p50", f.stats().p50());
            node.put("p90", f.stats().p90());
            node.put("p95", f.stats().p95());
            node.put("p99", f.stats().p99());
            node.put("min", f.stats().min());
            node.put("max", f.stats().max());
            if (f.target().isPresent()) {
                ObjectNode target = node.putObject("target");
                target.put("comparison", f.target().get().comparison().symbol());
                target.put(f.target().get().key(), f.target().get().value());
                target.put("met", f.met().orElseThrow());
            } else {
                node.putNull("target");
            }
            if (f.floor().isPresent()) {
                ObjectNode floor = node.putObject("floor");
                f.floor().get().parts().forEach(floor.putArray("parts")::add);
                floor.put("p50", f.floor().get().p50());
                floor.put("ratio", f.floor().get().ratio());
            } else {
                node.putNull("floor");
            }
        }
        root.set("details", JSON.valueToTree(report.details()));
        root.set("errors", JSON.valueToTree(report.errors()));
        return root;
    }

    static void write(Report report, Path file) throws IOException {
        Path target = file.toAbsolutePath();
        if (target.getParent() != null) Files.createDirectories(target.getParent());
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), toJson(report));
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
