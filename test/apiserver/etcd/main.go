// A single-member etcd for the test API server: the embedded etcd server of go.etcd.io/etcd/server/v3
// behind three flags, so the project builds etcd from the same module graph as kube-apiserver
// (k8s.io/kubernetes v1.34.4 itself depends on etcd v3.6.4) instead of downloading a release binary.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the etcd data (use a fresh one per start)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL kube-apiserver connects to")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL (single member, never dialled)")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("etcd: --data-dir is required")
	}
	client, err := url.Parse(*clientURL)
	if err != nil {
		log.Fatalf("etcd: --listen-client-url: %v", err)
	}
	peer, err := url.Parse(*peerURL)
	if err != nil {
		log.Fatalf("etcd: --listen-peer-url: %v", err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Tests throw the data away after each run: skip the fsync-heavy durability work.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "warn"

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
		log.Printf("etcd: ready on %s", client)
	case <-time.After(60 * time.Second):
		server.Server.Stop()
		log.Fatal("etcd: not ready after 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-server.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
	}
}
