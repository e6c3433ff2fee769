package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment files hold together: each Kubernetes object reads into the Kubernetes API's model
 * (fabric8's, generated from the API's OpenAPI schemas) with no field the schema lacks, and the
 * references inside them resolve; systemd accepts the unit.
 */
class DeployFilesTest {
    private static final Path KUBERNETES = Bash.ROOT.resolve("deploy/kubernetes/stasis.yaml");
    private static final Path UNIT = Bash.ROOT.resolve("deploy/systemd/stasis.service");
    private static final Map<String, Class<?>> KINDS = Map.of("v1/Namespace", Namespace.class, "apps/v1/DaemonSet", DaemonSet.class,
            "v1/Service", Service.class);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()).enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    @Test
    void everyKubernetesObjectFitsTheApiSchemaWithNoUnknownField() throws Exception {
        var objects = kubernetesObjects();
        assertThat(objects).extracting(o -> o.getClass().getSimpleName()).containsExactly("Namespace", "DaemonSet", "Service");
        for (Object object : objects) assertThat(unknownFields(object, "")).as(object.getClass().getSimpleName()).isEmpty();
    }

    @Test
    void theDaemonSetsSelectorsEnvironmentAndMountsResolve() throws Exception {
        var objects = kubernetesObjects();
        var daemonSet = (DaemonSet) objects.get(1);
        var service = (Service) objects.get(2);
        var template = daemonSet.getSpec().getTemplate();
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(daemonSet.getSpec().getSelector().getMatchLabels());
        assertThat(template.getMetadata().getLabels()).containsAllEntriesOf(service.getSpec().getSelector());
        assertThat(daemonSet.getMetadata().getNamespace()).isEqualTo(((Namespace) objects.get(0)).getMetadata().getName())
                .isEqualTo(service.getMetadata().getNamespace());

        var container = template.getSpec().getContainers().getFirst();
        Set<String> defined = Set.copyOf(container.getEnv().stream().map(EnvVar::getName).toList());
        var reference = Pattern.compile("\\$\\(([A-Z_]+)\\)");
        for (String arg : container.getArgs()) {
            assertThat(arg).as("a flag the service takes, as --name=value").startsWith("--").contains("=");
            var m = reference.matcher(arg);
            while (m.find()) assertThat(defined).as("variable of " + arg).contains(m.group(1));
        }
        var volumes = template.getSpec().getVolumes().stream().map(v -> v.getName()).toList();
        assertThat(container.getVolumeMounts()).allSatisfy(mount -> assertThat(volumes).contains(mount.getName()));
        assertThat(container.getSecurityContext().getPrivileged()).isTrue();
        assertThat(service.getSpec().getPorts().getFirst().getTargetPort().getStrVal())
                .isEqualTo(container.getPorts().getFirst().getName());
        // Sandboxes outlive their node's pod: no rolling restart behind the operator's back.
        assertThat(daemonSet.getSpec().getUpdateStrategy().getType()).isEqualTo("OnDelete");
    }

    @Test
    void systemdAcceptsTheUnitWhichStopsTheServiceAloneNeverItsSandboxes(@TempDir Path dir) throws Exception {
        String unit = Files.readString(UNIT);
        assertThat(unit).contains("KillMode=process").contains("ExecStart=/opt/stasis/stasis up $STASIS_FLAGS");
        Path analyze = Path.of("/usr/bin/systemd-analyze");
        assumeTrue(Files.isExecutable(analyze), "systemd-analyze is not installed");
        // verify checks that the command exists: point it at this checkout's launcher.
        Path copy = dir.resolve("stasis.service");
        Files.writeString(copy, unit.replace("/opt/stasis/stasis", Bash.ROOT.resolve("stasis").toString()));
        var process = new ProcessBuilder(analyze.toString(), "verify", "--man=no", copy.toString()).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(process.getInputStream().readAllBytes());
        // Outside a booted systemd (a container, CI) verify also reports the host's own units; only this one's lines count.
        var ours = output.lines().filter(line -> line.contains("stasis.service")).toList();
        assertThat(ours).as(output).isEmpty();
    }

    private static List<Object> kubernetesObjects() throws Exception {
        var out = new ArrayList<Object>();
        try (var parser = YAML.getFactory().createParser(KUBERNETES.toFile())) {
            for (JsonNode document : YAML.readValues(parser, JsonNode.class).readAll()) {
                String kind = document.path("apiVersion").asText() + "/" + document.path("kind").asText();
                Class<?> type = KINDS.get(kind);
                assertThat(type).as("a kind this test knows: " + kind).isNotNull();
                out.add(YAML.treeToValue(document, type));
            }
        }
        return out;
    }

    /**
     * The paths of fields the model kept aside because its schema has no such field: fabric8's
     * classes take unknown fields into {@code additionalProperties} instead of refusing them.
     */
    private static List<String> unknownFields(Object root, String path) throws ReflectiveOperationException {
        var out = new ArrayList<String>();
        walk(root, path, out, new IdentityHashMap<>());
        return out;
    }

    private static void walk(Object value, String path, List<String> out, IdentityHashMap<Object, Boolean> seen)
            throws ReflectiveOperationException {
        if (value == null || seen.put(value, true) != null) return;
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) walk(item, path + "[" + i++ + "]", out, seen);
            return;
        }
        if (value instanceof Map<?, ?> map) {
            for (var entry : map.entrySet()) walk(entry.getValue(), path + "." + entry.getKey(), out, seen);
            return;
        }
        if (!value.getClass().getPackageName().startsWith("io.fabric8.kubernetes.api.model")) return;
        for (Method getter : value.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers()) || !getter.getName().startsWith("get")
                    || getter.getDeclaringClass() == Object.class) continue;
            Object field;
            try {
                field = getter.invoke(value);
            } catch (InvocationTargetException e) {
                continue;
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (field instanceof Map<?, ?> extra && !extra.isEmpty())
                    extra.keySet().forEach(key -> out.add(path + "." + key));
                continue;
            }
            walk(field, path + "." + getter.getName().substring(3), out, seen);
        }
    }
}
