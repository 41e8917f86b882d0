package cli

import (
	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/agent"
	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/secret"
)

func newAgentCmd(env *Env) *cobra.Command {
	var f agent.Flags
	var store secret.DSN
	var outage outageOpts
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run clients for runs coordinated through a PostgreSQL store (fathom run --agents N)",
		Example: `  fathom agent --store postgres://fathom@store1/fathom
  fathom agent --store postgres://fathom@store1/fathom --run big1 --index 0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := env.Interrupts(cmd.Context())
			defer stop()
			portable, err := portablePaths(env)
			if err != nil {
				return err
			}
			return f.Execute(ctx, store, agent.Host{Getenv: env.Getenv, Events: &view.AgentLines{W: env.Stderr, Prefix: "fathom agent: "}, Version: version(), Tuner: env.tuner(), PollerSockets: portable,
				OpenStore: outage.opener(env), StoreOutage: outage.bound})
		},
	}
	storeFlag(cmd.Flags(), env, &store)
	outage.register(cmd.Flags())
	f.Register(cmd.Flags())
	return cmd
}

func newK8sCmd(env *Env) *cobra.Command {
	var k agent.K8s
	cmd := &cobra.Command{
		Use:   "k8s --agents N --name RUN [--coordinator -- RUN-ARGS]",
		Short: "Print Kubernetes Jobs for a run made by agents (kubectl apply -f -)",
		Example: `  fathom k8s --agents 8 --name big1 --image registry.example/fathom:1.4 --secret fathom | kubectl apply -f -
  fathom k8s --agents 8 --name big1 --coordinator -- --workload tpcb -c 256 -T 10m --target postgres://bench@db1/bench`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 && len(args) > 0 {
				return usagef("%s takes no arguments before --: the coordinator's run arguments go after --", cmd.CommandPath())
			}
			k.RunArgs = args
			return k.Write(env.Stdout)
		},
	}
	k.Register(cmd.Flags())
	return cmd
}
