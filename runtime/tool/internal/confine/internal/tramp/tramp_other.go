//go:build !linux

package tramp

func trampoline(Spec) int { return 125 }

func stage(stageSpec) int { return 125 }
