"""What the scheduler tests share: a two-layer model and its AdamW (with groups=2, the second layer a group of its
own at a tenth of the rate). Imported after the tests' importorskip of torch."""
import torch


def model_and_optimizer(lr=0.05, groups=1):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    if groups == 1:
        return model, torch.optim.AdamW(model.parameters(), lr=lr)
    params = [{"params": model[0].parameters(), "lr": lr}, {"params": model[1].parameters(), "lr": lr / 10}]
    return model, torch.optim.AdamW(params)
