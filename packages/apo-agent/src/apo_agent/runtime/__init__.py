"""What a run needs around its maths: checkpoints that resume exactly (`checkpoints`),
metrics to CSV and plots (`metrics`), the one seeding block and every derived seed
(`seeding`), the lock that keeps two processes out of one folder (`lock`), and how a run
uses the CPU (`cpu`: torch's threads, big tensors kept from page-faulting)."""
