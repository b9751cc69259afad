#!/bin/bash
# snapshot-webhook's greenboot check (docs/microshift.md): install as
# /etc/greenboot/check/required.d/50_snapshot_webhook_check.sh, after MicroShift's own 40_microshift_running_check.sh.
# It fails the boot (exit 1, so greenboot rolls back after its attempts) when the default-class rule is not live
# within MicroShift's own budget (get_wait_timeout: MICROSHIFT_WAIT_TIMEOUT_SEC times the boot attempt). It needs
# what the device has: MicroShift's greenboot functions and `microshift healthcheck`, podman, and the webhook's
# image, whose `check` command (docs/cli.md) asks the apiserver for a second default class as a dry run.
#
# Settings, from /etc/snapshot-webhook/greenboot.env when it exists (the device image writes it):
#   SNAPSHOT_WEBHOOK_IMAGE       the image, pinned by digest (required)
#   SNAPSHOT_WEBHOOK_DEPLOYMENT  NAMESPACE/NAME of the Deployment to wait for first (default
#                                snapshot-webhook/snapshot-webhook); "none" with the policy-only overlay
#   SNAPSHOT_WEBHOOK_KUBECONFIG  default /var/lib/microshift/resources/kubeadmin/kubeconfig
set -euo pipefail

SETTINGS=${SNAPSHOT_WEBHOOK_GREENBOOT_ENV:-/etc/snapshot-webhook/greenboot.env}
# shellcheck source=/dev/null
[ -f "${SETTINGS}" ] && source "${SETTINGS}"
# shellcheck source=/dev/null
source "${MICROSHIFT_GREENBOOT_FUNCTIONS:-/usr/share/microshift/functions/greenboot.sh}"

IMAGE=${SNAPSHOT_WEBHOOK_IMAGE:-}
DEPLOYMENT=${SNAPSHOT_WEBHOOK_DEPLOYMENT:-snapshot-webhook/snapshot-webhook}
KUBECONFIG_FILE=${SNAPSHOT_WEBHOOK_KUBECONFIG:-/var/lib/microshift/resources/kubeadmin/kubeconfig}

echo "snapshot-webhook: checking that the default-class rule is live"
if [ -z "${IMAGE}" ]; then
    echo "snapshot-webhook: SNAPSHOT_WEBHOOK_IMAGE is not set (${SETTINGS}): cannot run the check" >&2
    exit 1
fi
# MicroShift's own check failed this boot: it has waited already, and the rule cannot be live.
exit_if_fail_marker_exists

WAIT_TIMEOUT_SECS=$(get_wait_timeout)
START=$(date +%s)
if [ "${DEPLOYMENT}" != "none" ]; then
    if ! microshift healthcheck -v=2 --timeout="${WAIT_TIMEOUT_SECS}s" \
            --namespace "${DEPLOYMENT%%/*}" --deployments "${DEPLOYMENT##*/}"; then
        echo "snapshot-webhook: the Deployment ${DEPLOYMENT} is not ready within ${WAIT_TIMEOUT_SECS} s" >&2
        exit 1
    fi
fi
# The rest of the budget, and at least 10 s: the Deployment may have taken most of it.
LEFT=$(( WAIT_TIMEOUT_SECS - ( $(date +%s) - START ) ))
[ "${LEFT}" -lt 10 ] && LEFT=10

# Root in the container reads the root-only kubeconfig; no capability, no new privilege, a read-only root, and
# no SELinux relabel of a host file. Host network: the kubeconfig names the apiserver at localhost.
if ! podman run --rm --network host --user 0:0 --cap-drop all --security-opt no-new-privileges \
        --security-opt label=disable --read-only \
        --volume "${KUBECONFIG_FILE}:/run/snapshot-webhook/kubeconfig:ro" \
        "${IMAGE}" check --kubeconfig /run/snapshot-webhook/kubeconfig --wait "${LEFT}s"; then
    echo "snapshot-webhook: the default-class rule is not live after ${WAIT_TIMEOUT_SECS} s: failing the boot" >&2
    exit 1
fi
