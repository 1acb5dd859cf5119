package sysdesc

import (
	"reflect"
	"testing"

	"aimeter/sysinfo"
)

// MLPerf's network-mode fields of the example, by hand: every field the
// submission checker requires is there; the LoadGen NIC comes from the
// description, or, without it, from the interface the traffic left by.
func TestMLPerfFields(t *testing.T) {
	rec, err := Load(example)
	if err != nil {
		t.Fatal(err)
	}
	nics := []sysinfo.NIC{{Name: "ens1f0np0", SpeedMbps: 100000, Driver: "mlx5_core", PCIID: "15B3:101D"}, {Name: "lo", Loopback: true}}
	routes := []sysinfo.Route{{Target: "10.0.0.5:8000", Interface: "ens1f0np0"}}
	got := rec.MLPerfFields(MLPerfInput{NICs: nics, Routes: routes, Version: "1.2.3", Connections: 64})
	want := map[string]any{
		"is_network":                 true,
		"network_type":               "Ethernet",
		"network_media":              "400GBASE-SR4 and 200GBASE-SR4, multimode fibre",
		"network_rate":               "200 Gb/s",
		"nic_loadgen":                "1 × NVIDIA ConnectX-7 (MCX75310AAS), 400 Gb/s",
		"number_nic_loadgen":         1,
		"net_software_stack_loadgen": "aimeter 1.2.3 (the QDL); HTTP/1.1, KServe v2 REST with binary tensor data",
		"network_protocol":           "HTTP/1.1, KServe v2 REST with binary tensor data over TCP over IPv4 over Ethernet (IEEE 802.3), MTU 9000",
		"number_connections":         64,
		"nic_sut":                    "4 × NVIDIA ConnectX-7 (MCX755106AS), 200 Gb/s",
		"number_nic_sut":             4,
		"net_software_stack_sut":     "Ubuntu 22.04, MLNX_OFED 24.04, Triton Inference Server 24.05",
		"network_topology": "loadgen-1 → leaf switch (switch, 5 × 400 Gb/s) → front load balancer (load balancer, 2 × 200 Gb/s) → 2 × gpu-node; " +
			"diagram system_diagram.svg",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}
	for _, k := range MLPerfNetworkFields {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	rec.Description.LoadGen = nil
	got = rec.MLPerfFields(MLPerfInput{NICs: nics, Routes: routes})
	if got["nic_loadgen"] != "ens1f0np0 (mlx5_core, 15B3:101D, 100 Gb/s)" || got["number_nic_loadgen"] != 1 || got["number_connections"] != "" ||
		got["net_software_stack_loadgen"] != "HTTP/1.1, KServe v2 REST with binary tensor data" {
		t.Errorf("from the detected NICs: %#v", got)
	}
	if (&Record{Division: "network"}).MLPerfFields(MLPerfInput{}) != nil {
		t.Error("fields without a description")
	}
}
