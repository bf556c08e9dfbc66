package statestore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// selfSignedCA returns a server TLS config for 127.0.0.1 and the PEM file of
// its certificate (which is its own CA).
func selfSignedCA(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "flinkgo test broker"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, caFile
}

// The store reaches a broker that wants TLS and SCRAM through the agent
// options alone; a wrong password or an unknown CA fails NewKafka.
func TestKafkaFakeTLSSASL(t *testing.T) {
	srv, caFile := selfSignedCA(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(srv), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "agent", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	options := map[string]string{
		"kafkaBootstrapServers":              c.ListenAddrs()[0],
		"kafkaActionStateTopic":              "secure-state",
		"kafkaActionStateTopicNumPartitions": "4",
		"kafka.sasl.mechanism":               "SCRAM-SHA-256",
		"kafka.sasl.username":                "agent",
		"kafka.sasl.password":                "s3cret",
		"kafka.tls.enabled":                  "true",
		"kafka.tls.ca.file":                  caFile,
	}
	k, err := openOptions(t, options, nil)
	if err != nil {
		t.Fatalf("TLS + SCRAM: %v", err)
	}
	putAll(t, k, kRec(2, "a", 1, "x", StatusCompleted))
	if err := k.PutDurable(kRec(3, "a", 2, "x", StatusRunning)); err != nil {
		t.Fatal(err)
	}
	flush(t, k)
	_, err = openOptions(t, options, map[string]string{"kafka.sasl.password": "wrong"})
	if !errors.Is(err, ErrKafkaTopic) {
		t.Errorf("wrong password: err = %v", err)
	}
	t.Logf("wrong password: %v", err)
	_, otherCA := selfSignedCA(t)
	_, err = openOptions(t, options, map[string]string{"kafka.tls.ca.file": otherCA})
	if !errors.Is(err, ErrKafkaTopic) {
		t.Errorf("unknown CA: err = %v", err)
	}
	t.Logf("unknown CA: %v", err)
}

// openOptions opens a Kafka store from the agent options, with those of
// change replacing them; it fails fast on a refused handshake instead of
// retrying for the test context's life.
func openOptions(t *testing.T, options, change map[string]string) (*Kafka, error) {
	m := maps.Clone(options)
	maps.Copy(m, change)
	opts, err := KafkaOptionsFrom(m)
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, KafkaLogger(discardLog), KafkaClientOpts(kgo.RetryTimeout(2*time.Second), kgo.RequestRetries(1)))
	k, err := NewKafka(testCtx(t), opts...)
	if err == nil {
		t.Cleanup(func() { _ = k.Close() })
	}
	return k, err
}

// Each SASL mechanism the options name authenticates with its own
// credentials, and is refused with another mechanism's.
func TestKafkaFakeSASLMechanisms(t *testing.T) {
	srv, caFile := selfSignedCA(t)
	mechs := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
	for _, mech := range mechs {
		t.Run(mech, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(srv), kfake.EnableSASL(),
				kfake.Superuser(mech, "agent", "pw-"+mech))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			options := map[string]string{
				"kafkaBootstrapServers":              c.ListenAddrs()[0],
				"kafkaActionStateTopic":              "sasl-state",
				"kafkaActionStateTopicNumPartitions": "2",
				"kafka.sasl.username":                "agent",
				"kafka.sasl.password":                "pw-" + mech,
				"kafka.tls.enabled":                  "true",
				"kafka.tls.ca.file":                  caFile,
			}
			open := func(mechanism string) (*Kafka, error) {
				return openOptions(t, options, map[string]string{"kafka.sasl.mechanism": mechanism})
			}
			k, err := open(mech)
			if err != nil {
				t.Fatalf("%s: %v", mech, err)
			}
			if err := k.PutDurable(kRec(1, "a", 1, "x", StatusCompleted)); err != nil {
				t.Fatalf("%s: a write: %v", mech, err)
			}
			other := mechs[0]
			if other == mech {
				other = mechs[1]
			}
			if _, err := open(other); !errors.Is(err, ErrKafkaTopic) {
				t.Errorf("the broker knows %s only, the store uses %s: err = %v", mech, other, err)
			}
		})
	}
}
