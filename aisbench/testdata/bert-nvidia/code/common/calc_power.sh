#!/bin/bash
# Power over IPMI from the BMC, skipped when no BMC is configured.
calc_powerinfo_backgroud()
{
    [ -n "$BMC_IP" ] && command -v ipmitool >/dev/null || { echo "power: no BMC or ipmitool, not sampled"; return 0; }
}
set_powerinfo() { return 0; }
