package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The pass through the common calls that ends every start ({@link WarmUp}). */
@Tag("root")
class WarmUpIT {
    @Test
    void aStartWarmsUpAsATenantOfItsOwnThatItRemovesAlsoWhenAKilledStartLeftIt() throws Exception {
        var dataDir = Files.createTempDirectory("stasis-warm-up-it");
        String leftover;
        var first = ServiceFixture.startIn(dataDir);
        try (var api = new RawApi(first.url, first.rootKey)) {
            assertThat(tenantNames(api)).containsExactly("default");
            assertThat(api.get("/v1/sandboxes").get("items")).isEmpty();
            // What a start killed during its pass leaves: the pass's tenant, with a sandbox.
            String tenant = api.post("/v1/tenants", "{\"name\":\"" + WarmUp.tenantOf(ServerConfig.defaults().nodeName()) + "\"}").get("id").asText();
            String key = api.post("/v1/tenants/" + tenant + "/keys", "{}").get("secret").asText();
            try (var asTenant = new RawApi(first.url, key)) {
                leftover = asTenant.post("/v1/sandboxes", "{\"template\":\"tiny\",\"name\":\"warm-up\"}").get("id").asText();
            }
        } finally {
            first.stopKeepingSandboxes();
        }
        assertThat(runcContainers(first)).contains(leftover);
        try (var second = ServiceFixture.startIn(dataDir); var api = new RawApi(second.url, second.rootKey)) {
            assertThat(tenantNames(api)).containsExactly("default");
            assertThat(runcContainers(second)).doesNotContain(leftover);
            // Nothing of either pass shows to the operator's own tenant.
            assertThat(api.get("/v1/sandboxes").get("items")).isEmpty();
            assertThat(api.get("/v1/events").toString()).doesNotContain("warm-up");
        }
    }

    private static List<String> tenantNames(RawApi api) {
        var names = new ArrayList<String>();
        for (JsonNode tenant : api.get("/v1/tenants").get("items")) names.add(tenant.get("name").asText());
        return names;
    }

    /** The ids runc knows under the service's state directory. */
    private static List<String> runcContainers(ServiceFixture service) throws Exception {
        var root = service.dataDir.resolve("runtime/runc");
        if (!Files.isDirectory(root)) return List.of();
        try (var entries = Files.list(root)) {
            return entries.map(p -> p.getFileName().toString()).toList();
        }
    }
}
