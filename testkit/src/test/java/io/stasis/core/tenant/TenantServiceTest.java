package io.stasis.core.tenant;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.Credentials;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.testkit.CatalogFixtures;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.fake.InMemoryCatalog;
import org.junit.jupiter.api.Test;

/** Deleting a tenant: refused, with what is left named, while it holds sandboxes or volumes. */
class TenantServiceTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryCatalog catalog = new InMemoryCatalog(clock);
    private final TenantService tenants = new TenantService(catalog, catalog, new Credentials(catalog, clock), clock);

    @Test
    void aTenantWithAVolumeIsNotDeletedAndTheErrorSaysVolumes() {
        var tenant = tenants.create("with-volume", TenantQuota.UNLIMITED);
        var volume = CatalogFixtures.volume(tenant.id(), "data", T0);
        catalog.insertVolume(volume);

        assertThatThrownBy(() -> tenants.delete(tenant.id().value()))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_STATE))
                .hasMessage("tenant " + tenant.id().value() + " still has volumes; delete them first");
        assertThat(catalog.findTenant(tenant.id())).isPresent();

        catalog.deleteVolume(volume.id());
        tenants.delete(tenant.id().value());
        assertThat(catalog.findTenant(tenant.id())).isEmpty();
    }

    @Test
    void theErrorNamesSandboxesAloneOrWithVolumes() {
        var tenant = tenants.create("busy", TenantQuota.UNLIMITED);
        catalog.insert(CatalogFixtures.ofTenant(tenant.id(), SandboxState.RUNNING, 512, 100, T0));

        assertThatThrownBy(() -> tenants.delete(tenant.id().value()))
                .hasMessage("tenant " + tenant.id().value() + " still has sandboxes; delete them first");

        catalog.insertVolume(CatalogFixtures.volume(tenant.id(), "data", T0));
        assertThatThrownBy(() -> tenants.delete(tenant.id().value()))
                .hasMessage("tenant " + tenant.id().value() + " still has sandboxes and volumes; delete them first");
    }

    @Test
    void aSandboxBeingDeletedStillKeepsItsTenantAndIsNamed() {
        var tenant = tenants.create("tearing-down", TenantQuota.UNLIMITED);
        catalog.insert(CatalogFixtures.ofTenant(tenant.id(), SandboxState.DELETED, 512, 100, T0));

        assertThatThrownBy(() -> tenants.delete(tenant.id().value()))
                .hasMessage("tenant " + tenant.id().value() + " still has sandboxes; delete them first");
    }
}
