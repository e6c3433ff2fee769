package io.stasis.cli;

import io.stasis.sdk.StasisJson;
import io.stasis.sdk.TemplateInfo;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis templates}. */
@Command(name = "templates", mixinStandardHelpOptions = true,
        description = "List the templates sandboxes can be created from.")
final class TemplatesCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Override
    public Integer call() {
        List<TemplateInfo> templates = root.client().templates().list();
        if (root.json()) {
            root.io().out().println(StasisJson.writeList(templates));
        } else {
            root.io().out().print(render(templates));
        }
        return ExitCodes.OK;
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
        if (t.isBuilding() && t.progress() != null) {
            return String.format(Locale.ROOT, "%s %.0f%%", t.status(), Math.floor(t.progress() * 100));
        }
        return t.status();
    }
}
