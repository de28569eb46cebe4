# Session 22, the reviewing helper's H100 call (~18:40 UTC, its own command; output not kept, reported in its review:
# quotient mismatches 0 over 416 divisors x 1024 q; argument vs compiled-in bitwise equal — y, running stats, dx, dw, db —
# at (370000,1,75,75) 2.08e9 elements, (10500,64,56,56), (8700,256,25,38) bf16, eval flat / tiled and training).
cat > /tmp/t.py <<'E'
import torch,random,triton,triton.language as tl,fastnorm
from fastnorm.kernels import batch_norm as K,config
@triton.jit
def qk(v_ptr,o_ptr,MG):
    r=tl.arange(0,1024);tl.store(o_ptr+r,K._quotient(tl.load(v_ptr+r),MG,0))
R=random.Random(3);bad=0;M=2**31-1
ds=[1,2,3,5,7,65,99,196,3136,2**15+1,2**16,2**16+1,2**30-1,2**30,2**30+1,M]+[R.randrange(1,2**31) for _ in range(300)]+[R.randrange(1,9999) for _ in range(100)]
for d in ds:
    t=M//d*d;qs=[0,1,d-1,d,d+1,t-1,t,M,M-1,2**30,2**30-1]+[R.randrange(2**31) for _ in range(1013)];qs=[min(max(q,0),M) for q in qs]
    v=torch.tensor(qs,dtype=torch.int32,device='cuda');o=torch.empty_like(v);qk[(1,)](v,o,K._divisor_magic(d))
    bad+=int((o.cpu()!=torch.tensor([q//d for q in qs],dtype=torch.int32)).sum())
print('quotient mismatches',bad,len(ds),flush=True)
def run(sh,tr,th,sc):
    config.BN_APPLY_FLAT=(th,)+config.BN_APPLY_FLAT[1:];config.BN_SPATIAL_COMPILED=sc
    g=torch.Generator(device='cuda').manual_seed(0);c=sh[1]
    x=torch.randn(sh,device='cuda',dtype=torch.bfloat16,generator=g).requires_grad_(tr)
    w=torch.randn(c,device='cuda',requires_grad=tr);b=torch.randn(c,device='cuda',requires_grad=tr);rm=torch.zeros(c,device='cuda');rv=torch.ones(c,device='cuda')
    y=fastnorm.batch_norm(x,rm,rv,w,b,tr);r=[y.detach(),rm,rv]
    if tr:
        y.backward(torch.randn(sh,device='cuda',dtype=torch.bfloat16,generator=g));r+=[x.grad,w.grad,b.grad]
    sp=K._spatial(K.view(x.detach()));del x,y;return sp,r
for sh in [(370000,1,75,75),(10500,64,56,56),(8700,256,25,38)]:
    for tr,th in ((False,1<<23),(False,1<<62),(True,1<<23)):
        sa,a=run(sh,tr,th,1<<30);sb,b=run(sh,tr,th,0)
        print(sh,tr,th,sa,sb,[torch.equal(p,q) for p,q in zip(a,b)],flush=True);del a,b;torch.cuda.empty_cache()
E
cd src && PYTHONUNBUFFERED=1 python3 /tmp/t.py 2>&1 | grep -v -i warn
