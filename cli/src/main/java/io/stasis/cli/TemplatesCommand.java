package io.stasis.cli;

import io.stasis.sdk.TemplateInfo;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code stasis templates}. */
@Command(name = "templates", mixinStandardHelpOptions = true,
        description = {"List the templates sandboxes can be created from.",
                "--wait first waits for the builds under way, their progress on stderr when it is a terminal, "
                        + "and exits 1 if one failed."})
final class TemplatesCommand implements Callable<Integer> {
    /** How often --wait asks again. */
    private static final Duration POLL = Duration.ofMillis(500);

    @ParentCommand
    StasisCommand root;

    @Option(names = "--wait", description = "Wait until no template is building, then list them.")
    boolean waitForBuilds;

    @Override
    public Integer call() throws InterruptedException {
        List<TemplateInfo> templates = root.client().templates().list();
        if (waitForBuilds) templates = awaitBuilds(templates);
        root.printList(templates, TemplatesCommand::render);
        return waitForBuilds && templates.stream().anyMatch(TemplateInfo::isFailed) ? ExitCodes.ERROR : ExitCodes.OK;
    }

    private List<TemplateInfo> awaitBuilds(List<TemplateInfo> templates) throws InterruptedException {
        try (var progress = Progress.start(root)) {
            while (templates.stream().anyMatch(TemplateInfo::isBuilding)) {
                progress.show(building(templates));
                Thread.sleep(POLL);
                templates = root.client().templates().list();
            }
        }
        return templates;
    }

    /** {@code building base 42% (installing python3), tiny 10%}. */
    static String building(List<TemplateInfo> templates) {
        return "building " + templates.stream().filter(TemplateInfo::isBuilding)
                .map(t -> t.name() + (t.progress() == null ? "" : " " + percent(t))
                        + (t.message() == null || t.message().isBlank() ? "" : " (" + t.message() + ")"))
                .collect(Collectors.joining(", "));
    }

    static String render(List<TemplateInfo> templates) {
        boolean messages = templates.stream().anyMatch(t -> t.message() != null && !t.message().isBlank());
        Table table = messages
                ? Table.withHeaders("NAME", "STATUS", "VERSION", "SIZE", "MESSAGE")
                : Table.withHeaders("NAME", "STATUS", "VERSION", "SIZE");
        for (TemplateInfo t : templates) {
            String size = HumanFormat.size(t.sizeBytes());
            if (messages) {
                table.row(t.name(), status(t), t.version(), size, t.message());
            } else {
                table.row(t.name(), status(t), t.version(), size);
            }
        }
        return table.render();
    }

    /** {@code building 42%} while a build reports progress. */
    static String status(TemplateInfo t) {
        return t.isBuilding() && t.progress() != null ? t.status() + " " + percent(t) : t.status();
    }

    private static String percent(TemplateInfo t) {
        return String.format(Locale.ROOT, "%.0f%%", Math.floor(t.progress() * 100));
    }
}
